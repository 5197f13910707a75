"""``thoughtledger serve``: the MCP server (``api.mcp.serve``), loaded only when serving.

The command line is the composition root: it hands the server the parts of the other ways in
and out that it uses (the token file's verifier, the live OTLP stream, the language model
client, the browser view's live socket), so the server imports none of them.
"""

import argparse
import sys
from typing import TYPE_CHECKING

from thoughtledger.adapters.cli.catalogue import summary
from thoughtledger.adapters.cli.parsing import Parser, UsageError

if TYPE_CHECKING:  # the consoles and the ledger's facade are no part of a server's start
    from thoughtledger.adapters.cli.common import Commands, Ui

SUMMARY = summary("serve")
WAITING = (
    "thoughtledger serve: waiting for an MCP client's JSON-RPC on stdin (an MCP client starts "
    "this command itself; to look at sessions: thoughtledger sessions or thoughtledger ui; "
    "Ctrl-C stops)\n"
)
"""The line ``serve`` on stdio says when started from a terminal."""


def register(commands: "Commands") -> None:
    """List ``serve`` among the commands; :func:`serve` runs it (the entry point routes it)."""
    parser = commands.add_parser("serve", help=SUMMARY, description=SUMMARY, add_help=False)
    parser.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(handler=_misplaced)


def serve(argv: list[str]) -> int:
    """Parse the serve options and serve until the client goes away; return the exit code.

    The MCP server is imported here, not at start-up, so that other commands start fast.

    Raises:
        UsageError: Bad options.
    """
    from thoughtledger.adapters.auth.issuer import IssuerTokenVerifier
    from thoughtledger.adapters.auth.verifier import FileTokenVerifier
    from thoughtledger.adapters.llm.client import LLMWriter
    from thoughtledger.adapters.mcp.serve import ServeParts, add_serve_arguments, run_serve
    from thoughtledger.adapters.otel.live import live_traces
    from thoughtledger.adapters.otel.receiver import receiver_routes
    from thoughtledger.adapters.ui.live_app import live_socket_app

    parser = Parser(prog="thoughtledger serve", description=SUMMARY)
    add_serve_arguments(parser)  # --db included, with the server's own help
    parts = ServeParts(
        token_verifier=FileTokenVerifier,
        live_telemetry=live_traces,
        model_writer=LLMWriter,
        issuer_verifier=IssuerTokenVerifier,
        live_socket=live_socket_app,
        otlp_receiver=receiver_routes,
    )
    args = parser.parse_args(argv)
    if not args.http and sys.stdin.isatty():
        # Started by hand: on stdio the server sits silent, waiting for what a client sends.
        sys.stderr.write(WAITING)
        sys.stderr.flush()
    return run_serve(args, parts)


async def _misplaced(args: argparse.Namespace, ui: "Ui") -> int:
    raise UsageError("serve must come first: thoughtledger serve [options]")
