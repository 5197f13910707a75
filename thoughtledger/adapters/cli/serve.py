"""``thoughtledger serve``: the MCP server (``api.mcp.serve``), loaded only when serving.

The command line is the composition root: it hands the server the parts of the other ways in
and out that it uses (the token file's verifier, the live OTLP stream, the language model
client, the browser view's live socket), so the server imports none of them.
"""

import argparse
import importlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

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
    from thoughtledger.adapters.llm.client import LLMWriter  # opened by every lifespan
    from thoughtledger.adapters.mcp.serve import ServeParts, add_serve_arguments, run_serve

    parser = Parser(prog="thoughtledger serve", description=SUMMARY)
    add_serve_arguments(parser)  # --db included, with the server's own help
    parts = ServeParts(
        token_verifier=_when_called("thoughtledger.adapters.auth.verifier", "FileTokenVerifier"),
        live_telemetry=_when_called("thoughtledger.adapters.otel.live", "live_traces"),
        model_writer=LLMWriter,
        issuer_verifier=_when_called("thoughtledger.adapters.auth.issuer", "IssuerTokenVerifier"),
        live_socket=_when_called("thoughtledger.adapters.ui.live_app", "live_socket_app"),
        otlp_receiver=_when_called("thoughtledger.adapters.otel.receiver", "receiver_routes"),
    )
    args = parser.parse_args(argv)
    if not args.http and sys.stdin.isatty():
        # Started by hand: on stdio the server sits silent, waiting for what a client sends.
        sys.stderr.write(WAITING)
        sys.stderr.flush()
    return run_serve(args, parts)


def _when_called(module: str, name: str) -> Callable[..., Any]:
    """``name`` of ``module``, loaded at its first call.

    A part serves one option (``--auth``, ``--otlp``, ``--http``...): a server on stdio, as an
    MCP client starts one for every conversation, loads none of them before its first answer.
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return call


async def _misplaced(args: argparse.Namespace, ui: "Ui") -> int:
    raise UsageError("serve must come first: thoughtledger serve [options]")
