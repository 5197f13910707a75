"""stdio for the MCP server: every request answered, bad lines included, even after stdin closes.

:mod:`~thoughtledger.adapters.mcp.stdio.answering` serves over the streams below (``run_stdio``);
:mod:`~thoughtledger.adapters.mcp.stdio.pipes` reads and writes pipes on the event loop, and
:mod:`~thoughtledger.adapters.mcp.stdio.sdk_streams` anything else (a terminal, a file);
:mod:`~thoughtledger.adapters.mcp.stdio.framing` cuts the bytes into bounded lines of JSON-RPC,
:mod:`~thoughtledger.adapters.mcp.stdio.wire` answers the lines the SDK's parser refuses, and
:mod:`~thoughtledger.adapters.mcp.stdio.limits` says how large a message may be.
"""
