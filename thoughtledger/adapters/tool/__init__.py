"""The in-process tool (the session pattern): sequential thinking for Python agents, no MCP.

One :class:`SequentialThinkingTool` is what the session pattern calls a tool made by the factory: a
``name``, a ``description``, a JSON Schema of its ``parameters`` and an async ``execute`` that
records the thought in the ledger and answers with the session pattern's view. Each instance is one
agent's line of thought: it remembers the session it is in, so an agent loop needs to pass nothing
back; several instances in one process share nothing but the ledger. Example::

    tool = sequential_thinking_tool(ledger)
    answer = await tool.execute({"thought": "Map the failure modes", "thoughtNumber": 1,
                                 "totalThoughts": 3, "nextThoughtNeeded": True})
    answer["sessionId"]  # the same id on every later call, until the agent clears the session

Agent code that builds its own requests takes the definition from ``to_openai_chat()``,
``to_openai_responses()`` or ``to_anthropic()``; framework tool objects come from
:mod:`thoughtledger.adapters.tool.frameworks`.

The package by job: :mod:`~thoughtledger.adapters.tool.tool` (the tool),
:mod:`~thoughtledger.adapters.tool.arguments` (its arguments, derived from
:mod:`thoughtledger.ledger.thought`, and their refusals),
:mod:`~thoughtledger.adapters.tool.schemas`
(its name, description and the JSON Schemas it publishes).
"""

from thoughtledger.adapters.tool.arguments import ThinkingInput, ToolArguments, parse_arguments
from thoughtledger.adapters.tool.schemas import (
    DESCRIPTION,
    OUTPUT_SCHEMA,
    PARAMETERS,
    TOOL_NAME,
    ThinkingOutput,
)
from thoughtledger.adapters.tool.tool import SequentialThinkingTool, sequential_thinking_tool

__all__ = [
    "DESCRIPTION",
    "OUTPUT_SCHEMA",
    "PARAMETERS",
    "TOOL_NAME",
    "SequentialThinkingTool",
    "ThinkingInput",
    "ThinkingOutput",
    "ToolArguments",
    "parse_arguments",
    "sequential_thinking_tool",
]
