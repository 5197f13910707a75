"""``thoughtledger serve``: the MCP server (``api.mcp.serve``), loaded only when serving."""

import argparse
import importlib
from collections.abc import Callable

from api.cli.common import CliError, Commands, Parser, Ui, UsageError, add_db_option

SUMMARY = "run the MCP server for your agents (stdio; --http for streamable HTTP)"


def register(commands: Commands) -> None:
    """List ``serve`` among the commands; :func:`serve` runs it (the entry point routes it)."""
    parser = commands.add_parser("serve", help=SUMMARY, description=SUMMARY, add_help=False)
    parser.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(handler=_misplaced)


def serve(argv: list[str]) -> int:
    """Parse the serve options and serve until the client goes away; return the exit code.

    The MCP server is imported here, not at start-up, so that other commands start fast.

    Raises:
        UsageError: Bad options.
        CliError: The MCP server is not part of this installation.
    """
    try:
        mcp = importlib.import_module("api.mcp.serve")
    except ModuleNotFoundError as exc:
        if exc.name not in ("api.mcp", "api.mcp.serve"):
            raise
        raise CliError(
            "serve is not available: this installation has no MCP server (api.mcp.serve)"
        ) from None
    add_arguments: Callable[[argparse.ArgumentParser], None] = mcp.add_serve_arguments
    run: Callable[[argparse.Namespace], int] = mcp.run_serve
    # The MCP server may define --db itself; "resolve" lets its definition win over ours.
    parser = Parser(prog="thoughtledger serve", description=SUMMARY, conflict_handler="resolve")
    add_db_option(parser)
    add_arguments(parser)
    return run(parser.parse_args(argv))


async def _misplaced(args: argparse.Namespace, ui: Ui) -> int:
    raise UsageError("serve must come first: thoughtledger serve [options]")
