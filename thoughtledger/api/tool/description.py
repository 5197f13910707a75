"""What the in-process tool is called and what it tells a model about itself."""

TOOL_NAME = "sequentialthinking"
"""The tool's name, as the session pattern registers it (and as the official MCP server names
it)."""

GUIDANCE = """\
A detailed tool for dynamic and reflective problem-solving through thoughts.
Each thought can build on, question, or revise previous insights as understanding deepens.

When to use this tool:
- Breaking down complex problems into steps
- Planning and design with room for revision
- Analysis that might need course correction
- Problems where the full scope might not be clear initially

You should:
1. Start with an initial estimate of needed thoughts, but be ready to adjust
2. Feel free to question or revise previous thoughts, or branch to explore alternatives
3. Express uncertainty when present; ignore what is irrelevant to the current step
4. Generate a solution hypothesis and verify it against your earlier steps until satisfied
5. Provide a single, ideally correct answer as the final output

"""
"""The official advice cut to what a model needs besides the parameters' own words.

OpenAI refuses a function description over 1,024 characters (``string_above_max_length``), and
the official text has 2,781 (the session pattern's, 1,879). What their "Parameters explained"
lists and their advice about particular parameters said now lives in those parameters'
descriptions (see :mod:`thoughtledger.ledger.thought`), so a model still reads all of it, next to
the field it concerns. This tool and the MCP server's compact ``sequentialthinking`` (see
:mod:`thoughtledger.api.mcp.descriptions`) both start with it.
"""

DESCRIPTION = GUIDANCE + "Each parameter's description says how to use it."
"""The tool's description, within every provider's limits."""

__all__ = ["DESCRIPTION", "GUIDANCE", "TOOL_NAME"]
