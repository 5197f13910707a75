"""``thoughtledger ui``: the ledger in a browser, on loopback, read-only."""

import argparse
import sys
from pathlib import Path

from thoughtledger.api.cli.common import EXIT_OK, CliError, Commands, Ui, command, ledger_from
from thoughtledger.ledger.errors import InvalidInputError

SUMMARY = "look at sessions in your browser: tree, time travel, live, analytics (read-only)"
DEFAULT_PORT = 8766
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
"""Where the app may listen: it speaks plain HTTP, so on loopback only (as ``serve``)."""


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
    parser.add_argument(
        "--auth",
        type=Path,
        metavar="FILE",
        help="accept only the tokens in this token file (thoughtledger token add NAME makes "
        "one): a browser signs in with one, a reader or writer sees its own sessions, an "
        "auditor every session",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        type=_origin,
        default=[],
        metavar="ORIGIN",
        help="also accept requests from pages of this origin (scheme://host[:port]; again for "
        "more); by default only the app's own pages may call it",
    )


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Serve the app until Ctrl-C (or SIGTERM); the ledger is opened for reading only.

    Raises:
        LedgerError: The ledger or the token file cannot be opened.
        CliError: The port is taken or cannot be bound.
    """
    import uvicorn

    from thoughtledger.api.mcp.serve import SINGLE_PRINCIPAL_WARNING, bind
    from thoughtledger.api.mcp.stopping import http_server, signals_handled
    from thoughtledger.api.ui.routes import create_app

    verifier = None
    if args.auth is not None:
        from thoughtledger.api.auth.verifier import FileTokenVerifier

        # The token file first: a bad one stops the app before the ledger is touched.
        verifier = FileTokenVerifier(args.auth)
    async with ledger_from(args, read_only=True) as ledger:
        try:
            listener = bind(args.host, args.port)
        except OSError as exc:  # a port taken is a plain fact to report, not a crash
            message = f"{exc.strerror or exc} (--port P for another, 0 for any free one)"
            raise CliError(message) from None
        port = listener.getsockname()[1]
        app = create_app(ledger, verifier=verifier, allow_origins=args.allow_origin)
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off")
        http = http_server(config)

        def stop() -> None:  # live pages hold streams open: waiting for them would never end
            http.should_exit = http.force_exit = True

        async with signals_handled(stop, on_term=stop):
            host = f"[{args.host}]" if ":" in args.host else args.host
            if verifier is None:
                sys.stderr.write(f"thoughtledger ui: warning: {SINGLE_PRINCIPAL_WARNING}\n")
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
            f"{value!r} is not one of {', '.join(LOOPBACK_HOSTS)}: the app speaks plain "
            "HTTP, so it listens on loopback only"
        )
    return value


def _origin(value: str) -> str:
    from thoughtledger.api.ui.guards import check_origin

    try:
        return check_origin(value)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
