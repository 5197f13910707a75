"""The tool for LangChain and LangGraph (``pip install 'thoughtledger[langchain]'``)."""

from typing import TYPE_CHECKING, Any

from thoughtledger.adapters.tool import SequentialThinkingTool
from thoughtledger.adapters.tool.frameworks._extras import missing_framework
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.projections.answers import JsonDict

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool


def langchain_tool(tool: SequentialThinkingTool) -> "StructuredTool":
    """Wrap ``tool`` as a LangChain ``StructuredTool``: ``bind_tools`` and LangGraph take it.

    The tool's JSON Schema is its ``args_schema``, as it is. It is asynchronous only
    (``ainvoke``): the ledger lives on one event loop. Invalid arguments raise a
    ``ToolException`` that LangChain turns into the tool's answer, so the model reads what to fix.

    Args:
        tool: The tool to wrap; the agent's calls share its session.

    Returns:
        A ``StructuredTool`` named ``sequentialthinking``.

    Raises:
        ImportError: LangChain (langchain-core) is not installed (the message names the extra).
    """
    try:
        from langchain_core.tools import StructuredTool, ToolException
    except ImportError as exc:
        raise missing_framework(
            "langchain_tool", "LangChain (langchain-core)", "langchain", exc
        ) from exc

    async def sequentialthinking(**arguments: Any) -> JsonDict:
        try:
            return await tool.execute(arguments)
        except InvalidInputError as exc:
            raise ToolException(str(exc)) from exc

    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.parameters,
        coroutine=sequentialthinking,
        handle_tool_error=True,
    )


__all__ = ["langchain_tool"]
