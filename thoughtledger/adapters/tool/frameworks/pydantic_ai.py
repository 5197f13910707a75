"""The tool for pydantic-ai (``pip install 'thoughtledger[pydantic-ai]'``)."""

from typing import TYPE_CHECKING, Any

from thoughtledger.adapters.tool import SequentialThinkingTool
from thoughtledger.adapters.tool.frameworks._extras import missing_framework
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.projections.answers import JsonDict

if TYPE_CHECKING:
    from pydantic_ai import Tool


def pydantic_ai_tool(tool: SequentialThinkingTool) -> "Tool[Any]":
    """Wrap ``tool`` as a pydantic-ai ``Tool``: ``Agent(model, tools=[...])`` takes it.

    The tool's own JSON Schema is what the model sees (``Tool.from_schema``); the arguments are
    validated by :meth:`~thoughtledger.adapters.tool.SequentialThinkingTool.execute`, and invalid
    ones
    become a ``ModelRetry``, so the model is told what to fix and calls again.

    Args:
        tool: The tool to wrap; the agent's calls share its session.

    Returns:
        A ``Tool`` named ``sequentialthinking`` that takes no run context.

    Raises:
        ImportError: pydantic-ai is not installed (the message names the extra).
    """
    try:
        from pydantic_ai import ModelRetry, Tool
    except ImportError as exc:
        raise missing_framework("pydantic_ai_tool", "pydantic-ai", "pydantic-ai", exc) from exc

    async def sequentialthinking(**arguments: Any) -> JsonDict:
        try:
            return await tool.execute(arguments)
        except InvalidInputError as exc:
            raise ModelRetry(str(exc)) from exc

    return Tool.from_schema(
        sequentialthinking,
        name=tool.name,
        description=tool.description,
        json_schema=tool.parameters,
    )


__all__ = ["pydantic_ai_tool"]
