"""The async facade, the MCP server and the command line."""
