"""``serve --http``: the MCP server over streamable HTTP on a loopback port, and what guards it.

:mod:`~thoughtledger.adapters.mcp.http.serving` puts the SDK's app together and serves it;
:mod:`~thoughtledger.adapters.mcp.http.auth` says who may call (a token file, an OAuth issuer),
:mod:`~thoughtledger.adapters.mcp.http.transport_security` which web pages may,
:mod:`~thoughtledger.adapters.mcp.http.session_cap` how many sessions each principal holds,
:mod:`~thoughtledger.adapters.mcp.http.stream_recheck` ends a stream whose token stopped being
good, and :mod:`~thoughtledger.adapters.mcp.http.resource_metadata` publishes RFC 9728 metadata.
"""
