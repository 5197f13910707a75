"""``thoughtledger ui``: the ledger in a browser, on loopback, read-only."""

import argparse
import sys

from thoughtledger.api.cli.common import EXIT_OK, Commands, Ui, command, ledger_from

SUMMARY = "look at sessions in your browser: tree, time travel, live, analytics (read-only)"
DEFAULT_PORT = 8766
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
"""Where the app may listen: it has no authentication, so on loopback only (as ``serve``)."""


def register(commands: Commands) -> None:
    """Add the ``ui`` command."""
    parser = command(commands, "ui", SUMMARY, run)
    parser.add_argument(
        "--port",
        metavar="P",
        type=_port,
        default=DEFAULT_PORT,
        help=f"port to listen on (default {DEFAULT_PORT}; 0: any free port)",
    )
    parser.add_argument(
        "--host",
        default=LOOPBACK_HOSTS[0],
        type=_loopback,
        help=f"address: {', '.join(LOOPBACK_HOSTS)} (default: %(default)s)",
    )


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Serve the app until Ctrl-C (or SIGTERM); the ledger is opened for reading only.

    Raises:
        LedgerError: The ledger cannot be opened.
        OSError: The port is taken.
    """
    from thoughtledger.api.mcp.hardened import hardened_server
    from thoughtledger.api.mcp.serve import bind
    from thoughtledger.api.mcp.stopping import signals_handled
    from thoughtledger.api.ui.routes import create_app

    async with ledger_from(args, read_only=True) as ledger:
        listener = bind(args.host, args.port)
        port = listener.getsockname()[1]
        # Bounded like serve --http: no request may hold a connection open half-sent.
        http = hardened_server(create_app(ledger), lifespan="off")

        def stop() -> None:  # live pages hold streams open: waiting for them would never end
            http.should_exit = http.force_exit = True

        async with signals_handled(stop, on_term=stop):
            host = f"[{args.host}]" if ":" in args.host else args.host
            sys.stdout.write(f"thoughtledger ui: http://{host}:{port}/ (Ctrl-C stops)\n")
            sys.stdout.flush()
            await http.serve(sockets=[listener])
    return EXIT_OK


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is outside 0-65535")
    return port


def _loopback(value: str) -> str:
    if value not in LOOPBACK_HOSTS:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not one of {', '.join(LOOPBACK_HOSTS)}: the app has no "
            "authentication, so it listens on loopback only"
        )
    return value
