"""The MCP server: a drop-in for the official sequential-thinking server, over the ledger.

Example::

    from thoughtledger.api import open_ledger
    from thoughtledger.api.mcp import create_server

    async with open_ledger("sqlite:///ledger.db") as ledger:
        server = create_server(ledger, profile="official")
        ...  # server.run() for stdio, or thoughtledger.api.mcp.stdio.run_stdio(server) to answer
        bad lines

Modules: :mod:`~thoughtledger.api.mcp.server` (``create_server``),
:mod:`~thoughtledger.api.mcp.thinking` and :mod:`~thoughtledger.api.mcp.reading` (the tools and
resources; their arguments' lax types, the official server's coercion, are in
:mod:`thoughtledger.ledger.thought_types`), :mod:`~thoughtledger.api.mcp.stdio` (stdio that answers
bad lines) and :mod:`~thoughtledger.api.mcp.serve` (the ``serve`` entry point).
"""

from typing import TYPE_CHECKING

from thoughtledger.ledger._lazy import lazy_names

if TYPE_CHECKING:
    from thoughtledger.api.mcp.context import AppState, ProfileName
    from thoughtledger.api.mcp.server import (
        DEFAULT_TOOLS,
        PROFILES,
        TOOL_NAMES,
        LedgerMCPServer,
        create_server,
    )

# Loaded on first use: the server pulls in the MCP SDK (a second of start-up), which a module of
# this package used without a server (``thoughtledger record`` reads tool calls) does not need.
_LAZY = {
    "AppState": "thoughtledger.api.mcp.context",
    "ProfileName": "thoughtledger.api.mcp.context",
    "DEFAULT_TOOLS": "thoughtledger.api.mcp.server",
    "PROFILES": "thoughtledger.api.mcp.server",
    "TOOL_NAMES": "thoughtledger.api.mcp.server",
    "LedgerMCPServer": "thoughtledger.api.mcp.server",
    "create_server": "thoughtledger.api.mcp.server",
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
