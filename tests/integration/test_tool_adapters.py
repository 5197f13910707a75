"""Each framework adapter against the real framework: its own tool object, invoked in process.

No network and no language model: the OpenAI Agents SDK and LangChain tools are invoked the way
their runners invoke them, and pydantic-ai runs a whole agent loop on its scripted
``FunctionModel``. Every thought must land in the ledger, in the tool's session.
"""

import json
from typing import Any

import pytest

from tests.support.raw_store import raw_store
from thoughtledger import Ledger
from thoughtledger.adapters.tool import DESCRIPTION, PARAMETERS, sequential_thinking_tool
from thoughtledger.adapters.tool.frameworks import (
    langchain_tool,
    openai_agents_tool,
    pydantic_ai_tool,
)

pytestmark = pytest.mark.anyio


def call(number: int, *, more: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thoughtNumber": number,
        "totalThoughts": 2,
        "nextThoughtNeeded": more,
        **extra,
    }


async def thoughts_in(ledger: Ledger, session_id: str | None) -> list[str]:
    assert session_id is not None
    return [entry.thought for entry in (await ledger.state(session_id)).thoughts]


# -- OpenAI Agents SDK --------------------------------------------------------------------------


async def test_the_openai_agents_function_tool_records_thoughts(ledger: Ledger) -> None:
    pytest.importorskip("agents")
    from agents import Agent, FunctionTool
    from agents.tool_context import ToolContext

    tool = sequential_thinking_tool(ledger)
    function_tool = openai_agents_tool(tool)
    assert isinstance(function_tool, FunctionTool)
    assert (function_tool.name, function_tool.description) == ("sequentialthinking", DESCRIPTION)
    assert function_tool.params_json_schema == PARAMETERS
    assert function_tool.strict_json_schema is False
    Agent(name="planner", tools=[function_tool])  # the SDK accepts it as an agent's tool

    answers = []
    for number, more in ((1, True), (2, False)):
        arguments = json.dumps(call(number, more=more))
        context = ToolContext(
            context=None,
            tool_name=function_tool.name,
            tool_call_id=f"call-{number}",
            tool_arguments=arguments,
        )
        answers.append(json.loads(await function_tool.on_invoke_tool(context, arguments)))
    assert answers[0]["sessionId"] == answers[1]["sessionId"] == tool.session_id
    assert answers[1]["summary"].startswith("Sequential thinking complete: 2 thoughts")
    assert await thoughts_in(ledger, tool.session_id) == ["thought 1", "thought 2"]


async def test_the_openai_agents_tool_answers_invalid_arguments_with_the_reason(
    ledger: Ledger,
) -> None:
    pytest.importorskip("agents")
    from agents.tool_context import ToolContext

    function_tool = openai_agents_tool(sequential_thinking_tool(ledger))
    arguments = json.dumps(call(1, thoughtNumber=0))
    context = ToolContext(
        context=None, tool_name="sequentialthinking", tool_call_id="c", tool_arguments=arguments
    )
    answer = await function_tool.on_invoke_tool(context, arguments)
    assert answer.startswith("invalid thought: thoughtNumber:")
    assert await raw_store(ledger).read_all() == []


# -- pydantic-ai --------------------------------------------------------------------------------


async def test_a_pydantic_ai_agent_thinks_through_the_tool(ledger: Ledger) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    script = [call(1), call(2, more=False, thoughtNumber="2"), call(2, more=False)]
    heard: list[str] = []
    schemas: list[dict[str, Any]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        schemas.extend(t.parameters_json_schema for t in info.function_tools)
        last = messages[-1]
        if isinstance(last, ModelRequest):
            heard.extend(str(getattr(part, "content", "")) for part in last.parts)
        step = sum(isinstance(m, ModelResponse) for m in messages)
        if step < len(script):
            return ModelResponse(
                parts=[ToolCallPart("sequentialthinking", script[step], tool_call_id=f"c{step}")]
            )
        return ModelResponse(parts=[TextPart("done")])

    tool = sequential_thinking_tool(ledger)
    agent = Agent(FunctionModel(model), tools=[pydantic_ai_tool(tool)])
    result = await agent.run("Plan the migration")

    assert result.output == "done"
    assert schemas[0] == PARAMETERS
    # The invalid second call came back to the model as a reason to retry, naming the field.
    assert any("thoughtNumber: Input should be a valid integer" in text for text in heard)
    assert await thoughts_in(ledger, tool.session_id) == ["thought 1", "thought 2"]


# -- LangChain ----------------------------------------------------------------------------------


async def test_the_langchain_structured_tool_records_thoughts(ledger: Ledger) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import StructuredTool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    tool = sequential_thinking_tool(ledger)
    structured = langchain_tool(tool)
    assert isinstance(structured, StructuredTool)
    assert convert_to_openai_tool(structured) == tool.to_openai_chat()

    first = await structured.ainvoke(call(1))
    message = await structured.ainvoke(
        {"type": "tool_call", "id": "call-2", "name": "sequentialthinking", "args": call(2)}
    )
    assert isinstance(message, ToolMessage)
    second = json.loads(str(message.content))
    assert first["sessionId"] == second["sessionId"] == tool.session_id
    assert second["thoughtHistoryLength"] == 2
    assert await thoughts_in(ledger, tool.session_id) == ["thought 1", "thought 2"]


async def test_the_langchain_tool_answers_invalid_arguments_with_the_reason(
    ledger: Ledger,
) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import ToolMessage

    structured = langchain_tool(sequential_thinking_tool(ledger))
    message = await structured.ainvoke(
        {
            "type": "tool_call",
            "id": "call-1",
            "name": "sequentialthinking",
            "args": call(1, nextThoughtNeeded="yes"),
        }
    )
    assert isinstance(message, ToolMessage)
    assert message.status == "error"
    assert str(message.content).startswith("invalid thought: nextThoughtNeeded:")
    assert await raw_store(ledger).read_all() == []
