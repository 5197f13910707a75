"""The MCP server: a drop-in for the official sequential-thinking server, over the ledger.

Example::

    from thoughtledger.api import open_ledger
    from thoughtledger.adapters.mcp import create_server

    async with open_ledger("sqlite:///ledger.db") as ledger:
        server = create_server(ledger, profile="official")
        ...  # server.run() for stdio, or run_stdio(server) (of
        # thoughtledger.adapters.mcp.stdio.answering) to answer bad lines too

Rooms: :mod:`~thoughtledger.adapters.mcp.server` (``create_server``) puts together the tools and
resources of :mod:`~thoughtledger.adapters.mcp.tools` (their arguments' lax types, the official
server's coercion, are in :mod:`thoughtledger.ledger.thought_types`);
:mod:`~thoughtledger.adapters.mcp.serve` (the ``serve`` entry point, with
:mod:`~thoughtledger.adapters.mcp.serve_options` and :mod:`~thoughtledger.adapters.mcp.serve_parts`)
runs it over :mod:`~thoughtledger.adapters.mcp.stdio` (which answers bad lines too) or
:mod:`~thoughtledger.adapters.mcp.http`.
"""

from typing import TYPE_CHECKING

from thoughtledger.ledger._lazy import lazy_names

if TYPE_CHECKING:
    from thoughtledger.adapters.mcp.server import (
        DEFAULT_TOOLS,
        PROFILES,
        TOOL_NAMES,
        LedgerMCPServer,
        create_server,
    )
    from thoughtledger.adapters.mcp.tools.context import AppState, ProfileName

# Loaded on first use: the server pulls in the MCP SDK (a second of start-up), which a module of
# this package used without a server (``thoughtledger record`` reads tool calls) does not need.
_LAZY = {
    "AppState": "thoughtledger.adapters.mcp.tools.context",
    "ProfileName": "thoughtledger.adapters.mcp.tools.context",
    "DEFAULT_TOOLS": "thoughtledger.adapters.mcp.server",
    "PROFILES": "thoughtledger.adapters.mcp.server",
    "TOOL_NAMES": "thoughtledger.adapters.mcp.server",
    "LedgerMCPServer": "thoughtledger.adapters.mcp.server",
    "create_server": "thoughtledger.adapters.mcp.server",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "DEFAULT_TOOLS",
    "PROFILES",
    "TOOL_NAMES",
    "AppState",
    "LedgerMCPServer",
    "ProfileName",
    "create_server",
]
