"""What the in-process tool is called and what it tells a model about itself."""

from thoughtledger.ledger.thought import GUIDANCE

TOOL_NAME = "sequentialthinking"
"""The tool's name, as the session pattern registers it (and as the official MCP server names
it)."""

DESCRIPTION = GUIDANCE + "Each parameter's description says how to use it."
"""The tool's description, within every provider's limits."""

__all__ = ["DESCRIPTION", "TOOL_NAME"]
