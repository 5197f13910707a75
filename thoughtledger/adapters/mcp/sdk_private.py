"""The one module that touches the MCP SDK's private names, and the SDK versions it was checked on.

Private names can change in any release, so each one is named here with why no public name
serves, and a test fails when the installed SDK leaves :data:`CHECKED_RANGE`, asking for them to
be checked again:

* ``MCPServer._lowlevel_server``: the low-level ``Server`` an ``MCPServer`` wraps.
  :func:`thoughtledger.adapters.mcp.stdio.answering.run_stdio` serves it over stream wrappers of its
  own, which answer lines the SDK drops and hold stdin's end until every request is answered.
  ``MCPServer`` has no public way to serve over given streams (``run_stdio_async`` builds its own);
  the SDK's migration guide reaches the low-level server the same way.

* ``ServerSession._request_outbound``, a wrapper's ``_inner`` and the in-process dispatch
  context's ``_on_progress``: whether an in-process client (``mcp.Client(server)``) in the
  2026-07-28 era gave its call a progress callback (:func:`in_process_progress`). Over a wire the
  request's ``_meta`` carries a progress token and says so publicly; in process the SDK hands the
  callback over directly and puts no token in ``_meta``. Where these names are missing the answer
  is "no": the call is answered whole, as without a callback.

Nothing else is private: the stream types the low-level server takes are protocols, matched by shape
(:mod:`thoughtledger.adapters.mcp.stdio.answering` declares its own), and the HTTP session cap is
Starlette middleware around the SDK's public application.
"""

from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer

CHECKED_RANGE = ">=2.3,<2.4"
"""The ``mcp`` versions whose private names above were read and tested (a version specifier)."""


def lowlevel_server(server: MCPServer[Any]) -> Server[Any]:
    """Return the low-level server ``server`` wraps.

    Raises:
        RuntimeError: This SDK no longer has it where :data:`CHECKED_RANGE` had it.
    """
    lowlevel = getattr(server, "_lowlevel_server", None)
    if not isinstance(lowlevel, Server):
        raise RuntimeError(
            "this version of the mcp package keeps its low-level server elsewhere; thoughtledger "
            f"was checked against mcp{CHECKED_RANGE}"
        )
    return lowlevel


def in_process_progress(request_context: object) -> bool:
    """Whether an in-process client's call came with a progress callback (see the docstring)."""
    outbound = getattr(getattr(request_context, "session", None), "_request_outbound", None)
    for _ in range(4):  # the SDK wraps the dispatch context once or twice
        inner = getattr(outbound, "_inner", None)
        if inner is None:
            break
        outbound = inner
    return getattr(outbound, "_on_progress", None) is not None


__all__ = ["CHECKED_RANGE", "in_process_progress", "lowlevel_server"]
