"""``thoughtledger ui``: the ledger in a browser, on loopback: look, annotate, fork, redact."""

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from thoughtledger.adapters.cli.common import EXIT_OK, CliError, Commands, Ui, command, ledger_from
from thoughtledger.adapters.common.options import (
    add_issuer_options,
    bounded,
    check_issuer_options,
    loopback_host,
    port_number,
)
from thoughtledger.adapters.common.origins import LOOPBACK_HOSTS
from thoughtledger.adapters.common.shares import (
    LIVE_PER_PRINCIPAL,
    SIGN_INS_PER_PRINCIPAL,
    Limits,
)
from thoughtledger.ledger.errors import InvalidInputError

if TYPE_CHECKING:
    pass

DEFAULT_PORT = 8766
UNGUARDED_WARNING = (
    "serving without --auth: any process on this machine can read every session and annotate, "
    "fork and redact any of them (--read-only only shows; use --auth FILE; see: thoughtledger "
    "token add --help)"
)
"""What ``ui`` says without a token file: what an unguarded view lets every local user do."""
UNGUARDED_READ_ONLY_WARNING = (
    "serving without --auth: any process on this machine can read every session (--read-only: "
    "nothing can be changed from the page; use --auth FILE; see: thoughtledger token add --help)"
)
"""The same, for ``ui --read-only``."""
_count = bounded(int, lambda count: count >= 1, "a whole number >= 1")


def register(commands: Commands) -> None:
    """Add the ``ui`` command."""
    parser = command(commands, "ui", run)
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
        help="accept only the tokens in this token file (thoughtledger token add NAME makes "
        "one): a browser signs in with one, a reader or writer sees its own sessions, an "
        "auditor every session",
    )
    add_issuer_options(parser)
    parser.add_argument(
        "--max-live",
        type=_count,
        metavar="N",
        help=f"live sockets and streams each principal may hold open; one more gets HTTP 429 "
        f"(default: {LIVE_PER_PRINCIPAL})",
    )
    parser.add_argument(
        "--max-live-total",
        type=_count,
        metavar="N",
        help="live sockets and streams every principal together may hold open; when full, the "
        "principal holding the most gives up its oldest, or the newcomer gets 429 (default: "
        "half the connections the app accepts)",
    )
    parser.add_argument(
        "--max-sign-ins",
        type=_count,
        metavar="N",
        help=f"with --auth: sign-ins (browsers) each principal may hold; one more ends its own "
        f"oldest (default: {SIGN_INS_PER_PRINCIPAL})",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="open the ledger for reading only: the page shows it and refuses every act",
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
    """Serve the app until Ctrl-C (or SIGTERM); the acts write to the ledger unless --read-only.

    Raises:
        LedgerError: The ledger or the token file cannot be opened, or the issuer's keys
            cannot be fetched.
        InvalidInputError: Issuer options without ``--auth-issuer``, or an issuer URL keys
            may not be fetched from.
        CliError: The port is taken or cannot be bound.
    """
    from thoughtledger.adapters.cli.web_auth import web_verifier
    from thoughtledger.adapters.common.hardened import bind, hardened_server, serve_on
    from thoughtledger.adapters.common.stopping import signals_handled
    from thoughtledger.adapters.ui.routes import create_app

    file_verifier = None
    if args.auth is not None:
        from thoughtledger.adapters.auth.verifier import FileTokenVerifier

        # The token file first: a bad one stops the app before the ledger is touched.
        file_verifier = FileTokenVerifier(args.auth)
    check_issuer_options(args)  # before the ledger is touched
    async with ledger_from(args, read_only=True):
        pass  # a missing ledger (or not a ledger) is refused, never made, before it is opened
    async with ledger_from(args, read_only=args.read_only) as ledger:
        try:
            listener = bind(args.host, args.port)
        except OSError as exc:  # a port taken is a plain fact to report, not a crash
            message = f"{exc.strerror or exc} (--port P for another, 0 for any free one)"
            raise CliError(message) from None
        port = listener.getsockname()[1]
        verifier = await web_verifier(args, file_verifier, port)
        limits = Limits(
            live=args.max_live or LIVE_PER_PRINCIPAL,
            live_total=args.max_live_total,
            sign_ins=args.max_sign_ins or SIGN_INS_PER_PRINCIPAL,
        )
        app = create_app(
            ledger,
            verifier=verifier,
            allow_origins=args.allow_origin,
            limits=limits,
            read_only=args.read_only,
        )
        # Bounded like serve --http: no request may hold a connection open half-sent.
        http = hardened_server(app, lifespan="off", websocket=True)

        interrupted: list[bool] = []

        def stop() -> None:  # live pages hold streams open: waiting for them would never end
            http.should_exit = http.force_exit = True

        def interrupt() -> None:
            interrupted.append(True)
            stop()

        async with signals_handled(interrupt, on_term=stop):
            host = f"[{args.host}]" if ":" in args.host else args.host
            if verifier is None:
                said = UNGUARDED_READ_ONLY_WARNING if args.read_only else UNGUARDED_WARNING
                sys.stderr.write(f"thoughtledger ui: warning: {said}\n")
            sys.stdout.write(f"thoughtledger ui: http://{host}:{port}/ (Ctrl-C stops)\n")
            sys.stdout.flush()
            await serve_on(http, listener)
    if interrupted:  # its normal stop, said as serve says it
        sys.stderr.write("thoughtledger: stopped (Ctrl-C)\n")
    return EXIT_OK


def _origin(value: str) -> str:
    from thoughtledger.adapters.common.origins import parse_origin

    try:
        return parse_origin(value)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
