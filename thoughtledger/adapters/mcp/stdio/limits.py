"""The largest MCP message, known without loading the MCP SDK.

The SDK caps an HTTP request body at ``DEFAULT_MAX_REQUEST_BODY_SIZE`` and the stdio framing
(:mod:`thoughtledger.adapters.mcp.stdio.framing`) takes the same bound for a line. ``thoughtledger
record``
reads lines of tool calls under it too, and must not pay a second of start-up to import the SDK
for one number: the number is here, and a unit test holds it equal to the SDK's.
"""

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""The SDK's ``DEFAULT_MAX_REQUEST_BODY_SIZE``: the largest request body, or stdio line."""

__all__ = ["MAX_MESSAGE_BYTES"]
