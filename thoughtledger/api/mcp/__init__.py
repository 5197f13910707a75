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

from thoughtledger.api.mcp.context import AppState, ProfileName
from thoughtledger.api.mcp.server import (
    DEFAULT_TOOLS,
    PROFILES,
    TOOL_NAMES,
    LedgerMCPServer,
    create_server,
)

__all__ = [
    "DEFAULT_TOOLS",
    "PROFILES",
    "TOOL_NAMES",
    "AppState",
    "LedgerMCPServer",
    "ProfileName",
    "create_server",
]
