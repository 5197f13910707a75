"""``thoughtledger receive``: the OTLP/HTTP receiver alone, for a collector-only deployment.

The same routes ``serve --http`` mounts beside MCP (``POST /v1/traces``, ``POST /v1/logs``),
with the same tokens (``--auth``, ``--auth-issuer``), origin rules and HTTP bounds, on a
loopback port of their own (4318, OTLP/HTTP's, by default).
"""

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from thoughtledger.adapters.cli.common import EXIT_OK, CliError, Commands, Ui, command, ledger_from
from thoughtledger.adapters.common.options import add_issuer_options, loopback_host, port_number
from thoughtledger.adapters.common.origins import LOOPBACK_HOSTS
from thoughtledger.ledger.errors import InvalidInputError

if TYPE_CHECKING:
    import socket

    from mcp.server.auth.provider import TokenVerifier

    from thoughtledger.api import Ledger

DEFAULT_PORT = 4318
"""OTLP/HTTP's own port: senders' default endpoint is http://localhost:4318."""


def register(commands: Commands) -> None:
    """Add the ``receive`` command."""
    parser = command(commands, "receive", run)
    parser.add_argument(
        "--port",
        metavar="P",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"port to listen on (default {DEFAULT_PORT}; 0: any free port)",
    )
    parser.add_argument(
        "--host",
        default=LOOPBACK_HOSTS[0],
        type=loopback_host,
        help=f"address: {', '.join(LOOPBACK_HOSTS)} (default: %(default)s)",
    )
    parser.add_argument(
        "--auth",
        type=Path,
        metavar="FILE",
        help="accept only the tokens in this token file (as serve --http does); each "
        "principal owns the sessions its spans start",
    )
    add_issuer_options(parser)
    parser.add_argument(
        "--allow-origin",
        action="append",
        type=_origin,
        default=[],
        metavar="ORIGIN",
        help="also accept requests from pages of this origin (scheme://host[:port])",
    )


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Receive OTLP exports until Ctrl-C or SIGTERM (requests in flight are answered first).

    Raises:
        LedgerError: The ledger or the token file cannot be opened, or the issuer's keys
            cannot be fetched.
        InvalidInputError: Issuer options without ``--auth-issuer``, or an issuer URL keys
            may not be fetched from.
        CliError: The port is taken or cannot be bound.
    """
    from thoughtledger.adapters.cli.web_auth import web_verifier
    from thoughtledger.adapters.common.hardened import bind

    file_verifier = None
    if args.auth is not None:
        from thoughtledger.adapters.auth.verifier import FileTokenVerifier

        file_verifier = FileTokenVerifier(args.auth)  # a bad file stops before the ledger opens
    # Bound before the ledger opens, as serve --http does: the port is in the default
    # audience, and the issuer's options are checked (and its keys fetched) before a missing
    # ledger is made.
    try:
        listener = bind(args.host, args.port)
    except OSError as exc:
        message = f"{exc.strerror or exc} (--port P for another, 0 for any free one)"
        raise CliError(message) from None
    with contextlib.closing(listener):
        port = listener.getsockname()[1]
        verifier = await web_verifier(args, file_verifier, port)
        async with ledger_from(args, read_only=False) as ledger:
            interrupted = await _serve(ledger, verifier, args, listener, port)
    if interrupted:  # its normal stop, said as serve and ui say it
        sys.stderr.write("thoughtledger: stopped (Ctrl-C)\n")
    return EXIT_OK


async def _serve(
    ledger: "Ledger",
    verifier: "TokenVerifier | None",
    args: argparse.Namespace,
    listener: "socket.socket",
    port: int,
) -> bool:
    """Serve the receiver on ``listener`` until a signal stops it; whether Ctrl-C did."""
    from starlette.applications import Starlette

    from thoughtledger.adapters.common.hardened import hardened_server, serve_on
    from thoughtledger.adapters.common.stopping import signals_handled
    from thoughtledger.adapters.mcp.http.serving import SINGLE_PRINCIPAL_WARNING
    from thoughtledger.adapters.otel.receiver import receiver_routes

    app = Starlette(routes=receiver_routes(ledger, verifier, args.allow_origin))
    http = hardened_server(app, lifespan="off")
    interrupted: list[bool] = []

    def stop_now() -> None:
        interrupted.append(True)
        http.should_exit = http.force_exit = True

    def stop() -> None:
        http.should_exit = True

    async with signals_handled(stop_now, on_term=stop):
        host = f"[{args.host}]" if ":" in args.host else args.host
        if verifier is None:
            sys.stderr.write(f"thoughtledger receive: warning: {SINGLE_PRINCIPAL_WARNING}\n")
        sys.stdout.write(
            f"thoughtledger receive: url=http://{host}:{port}/v1/traces (Ctrl-C stops)\n"
        )
        sys.stdout.flush()
        await serve_on(http, listener)
    return bool(interrupted)


def _origin(value: str) -> str:
    from thoughtledger.adapters.common.origins import parse_origin

    try:
        return parse_origin(value)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
