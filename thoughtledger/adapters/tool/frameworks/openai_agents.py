"""The tool for the OpenAI Agents SDK (``pip install 'thoughtledger[openai-agents]'``)."""

import json
from typing import TYPE_CHECKING, Any

from thoughtledger.adapters.tool import SequentialThinkingTool
from thoughtledger.adapters.tool.frameworks._extras import missing_framework
from thoughtledger.ledger.errors import InvalidInputError

if TYPE_CHECKING:
    from agents import FunctionTool
    from agents.tool_context import ToolContext


def openai_agents_tool(tool: SequentialThinkingTool) -> "FunctionTool":
    """Wrap ``tool`` as an OpenAI Agents SDK ``FunctionTool``: ``Agent(tools=[...])`` takes it.

    The schema is passed as it is, with the SDK's strict mode off: strict mode would make every
    optional property required (and nullable), which is not the session pattern's schema. The answer
    goes back to the model as JSON text; invalid arguments go back as the error message, which the
    model can act on, instead of failing the run.

    Args:
        tool: The tool to wrap; the agent's calls share its session.

    Returns:
        A ``FunctionTool`` named ``sequentialthinking``.

    Raises:
        ImportError: The OpenAI Agents SDK is not installed (the message names the extra).
    """
    try:
        from agents import FunctionTool
    except ImportError as exc:
        raise missing_framework(
            "openai_agents_tool", "the OpenAI Agents SDK", "openai-agents", exc
        ) from exc

    async def invoke(context: "ToolContext[Any]", arguments: str) -> str:
        try:
            answer = await tool.execute(arguments)
        except InvalidInputError as exc:
            return str(exc)
        return json.dumps(answer, ensure_ascii=False)

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=tool.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


__all__ = ["openai_agents_tool"]
