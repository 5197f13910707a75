"""The MCP tools and resources: what a call says, which session it means, and what it answers.

The handlers (:mod:`~thoughtledger.adapters.mcp.tools.thinking`,
:mod:`~thoughtledger.adapters.mcp.tools.batch`, :mod:`~thoughtledger.adapters.mcp.tools.reading`,
:mod:`~thoughtledger.adapters.mcp.tools.insights`), their parameters and the official server's lax
types and descriptions, the answers' shapes and the per-thought box, the session a call continues
(:mod:`~thoughtledger.adapters.mcp.tools.targets`) and what every call reaches
(:mod:`~thoughtledger.adapters.mcp.tools.context`). They know nothing of the transport:
:mod:`thoughtledger.adapters.mcp.server` puts them together.
"""
