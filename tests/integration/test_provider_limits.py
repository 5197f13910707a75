"""Every tool definition we export is one the model providers accept.

The limits, and where each is stated:

* OpenAI, function ``name``: letters, digits, ``_`` and ``-``, at most 64 characters (API
  reference, ``FunctionDefinition.name``: "Must be a-z, A-Z, 0-9, or contain underscores and
  dashes, with a maximum length of 64").
* OpenAI, function ``description``: at most 1,024 characters. The API reference does not say so;
  the API answers ``string_above_max_length`` ("Invalid 'tools[0].function.description': string
  too long. Expected a string with maximum length 1024"), as reported against the official
  sequential-thinking server (modelcontextprotocol/servers#799) and many MCP clients.
* Anthropic, tool ``name``: ``^[a-zA-Z0-9_-]{1,64}$`` (Claude API docs, "Define tools"); its
  ``description`` has no documented limit (every format exports the same description, so the
  Anthropic export is held to OpenAI's 1,024 characters too).
* Parameter descriptions: neither provider documents a limit. Each is held to 1,024 characters
  too, the one limit known for a description.

A length is counted in code points and in UTF-16 units (what a JavaScript client counts), and
must fit both. The in-process tool's exports are checked format by format; the MCP server's
tools with ``--descriptions compact``, as a client lists them and as ``serve`` lists them.
"""

import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from pydantic import TypeAdapter

from tests.support.mcp import Json, Mode
from thoughtledger import Ledger
from thoughtledger.adapters.mcp import TOOL_NAMES, create_server
from thoughtledger.adapters.mcp.server import DescriptionsName
from thoughtledger.adapters.mcp.tools.descriptions import OFFICIAL_DESCRIPTION
from thoughtledger.adapters.tool import SequentialThinkingTool, sequential_thinking_tool

pytestmark = pytest.mark.anyio

NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""OpenAI's and Anthropic's rule for a tool's name."""
DESCRIPTION_LIMIT = 1024
"""OpenAI's limit on a function description, in characters."""

ROOT = Path(__file__).resolve().parents[2]

# What the full description advised, which a compact one must still tell the model somewhere.
TOOL_GUIDANCE = [
    "revise",
    "branch",
    "up or down",
    "beyond",
    "what seemed like the end",
    "uncertainty",
    "irrelevant",
    "truly done",
    "session",
]
MCP_GUIDANCE = [*TOOL_GUIDANCE, "hypothesis", "verif", "isRevision", "sessionId", "afresh"]


def length(text: str) -> int:
    """The larger of the two counts a provider might use: code points and UTF-16 units."""
    return max(len(text), len(text.encode("utf-16-le")) // 2)


def schema_descriptions(schema: Any) -> Iterator[str]:
    """Every ``description`` anywhere in a JSON Schema."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "description" and isinstance(value, str):
                yield value
            elif key == "properties" and isinstance(value, dict):
                for spec in value.values():
                    yield from schema_descriptions(spec)
            else:
                yield from schema_descriptions(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from schema_descriptions(item)


def assert_within_limits(name: str, description: str, parameters: Json) -> None:
    assert NAME.fullmatch(name), name
    assert 0 < length(description) <= DESCRIPTION_LIMIT, (name, length(description))
    described = list(schema_descriptions(parameters))
    assert described, name
    for text in described:
        assert 0 < length(text) <= DESCRIPTION_LIMIT, (name, text[:80])


def all_words(description: str, parameters: Json) -> str:
    return " ".join([description, *schema_descriptions(parameters)])


# -- the in-process tool, per export format ------------------------------------------------------

Unpacked = tuple[str, str, Json]
"""An exported tool's name, description and parameter schema."""


def openai_chat(tool: SequentialThinkingTool) -> Unpacked:
    function = tool.to_openai_chat()["function"]
    return function["name"], function["description"], function["parameters"]


def openai_responses(tool: SequentialThinkingTool) -> Unpacked:
    exported = tool.to_openai_responses()
    return exported["name"], exported["description"], exported["parameters"]


def anthropic(tool: SequentialThinkingTool) -> Unpacked:
    exported = tool.to_anthropic()
    return exported["name"], exported["description"], exported["input_schema"]


EXPORTS: list[Callable[[SequentialThinkingTool], Unpacked]] = [
    openai_chat,
    openai_responses,
    anthropic,
]


@pytest.mark.parametrize("export", EXPORTS, ids=lambda export: export.__name__)
async def test_each_export_of_the_tool_is_within_the_providers_limits(
    ledger: Ledger, export: Callable[[SequentialThinkingTool], Unpacked]
) -> None:
    name, description, parameters = export(sequential_thinking_tool(ledger))
    assert_within_limits(name, description, parameters)


@pytest.mark.parametrize("export", EXPORTS, ids=lambda export: export.__name__)
async def test_each_export_of_the_tool_keeps_the_full_guidance(
    ledger: Ledger, export: Callable[[SequentialThinkingTool], Unpacked]
) -> None:
    _, description, parameters = export(sequential_thinking_tool(ledger))
    words = all_words(description, parameters)
    assert [advice for advice in TOOL_GUIDANCE if advice not in words] == []


async def test_the_openai_exports_are_what_the_openai_sdk_sends(ledger: Ledger) -> None:
    pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionToolParam

    tool = sequential_thinking_tool(ledger)
    chat = TypeAdapter(ChatCompletionFunctionToolParam).validate_python(tool.to_openai_chat())
    assert length(chat["function"].get("description", "")) <= DESCRIPTION_LIMIT
    responses = TypeAdapter(FunctionToolParam).validate_python(tool.to_openai_responses())
    assert length(responses.get("description") or "") <= DESCRIPTION_LIMIT


# -- the MCP server's tools ------------------------------------------------------------------


async def listed(ledger: Ledger, mode: Mode, descriptions: DescriptionsName) -> list[Unpacked]:
    server = create_server(ledger, tools=TOOL_NAMES, descriptions=descriptions)
    async with Client(server, mode=mode) as client:
        tools = (await client.list_tools()).tools
    return [(tool.name, tool.description or "", tool.input_schema) for tool in tools]


async def test_with_compact_descriptions_every_mcp_tool_is_within_the_limits(
    ledger: Ledger, mode: Mode
) -> None:
    tools = await listed(ledger, mode, "compact")
    assert [name for name, _, _ in tools] == list(TOOL_NAMES)
    for name, description, parameters in tools:
        assert_within_limits(name, description, parameters)


async def test_compact_descriptions_keep_the_official_guidance(ledger: Ledger) -> None:
    name, description, parameters = (await listed(ledger, "legacy", "compact"))[0]
    assert name == "sequentialthinking"
    words = all_words(description, parameters)
    assert [advice for advice in MCP_GUIDANCE if advice not in words] == []
    assert "thinking_history" in description


async def test_official_descriptions_stay_the_official_servers_words(ledger: Ledger) -> None:
    tools = {
        name: description for name, description, _ in await listed(ledger, "legacy", "official")
    }
    assert tools["sequentialthinking"].startswith(OFFICIAL_DESCRIPTION)
    # Why the compact style exists: the official text alone is past OpenAI's limit.
    assert length(OFFICIAL_DESCRIPTION) > DESCRIPTION_LIMIT


async def test_compact_tools_convert_to_openai_functions_an_openai_client_accepts(
    ledger: Ledger,
) -> None:
    pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionFunctionToolParam

    adapter = TypeAdapter(ChatCompletionFunctionToolParam)
    for name, description, parameters in await listed(ledger, "legacy", "compact"):
        # What an OpenAI-backed MCP client sends for each listed tool.
        function = {"name": name, "description": description, "parameters": parameters}
        adapter.validate_python({"type": "function", "function": function})


async def test_serve_descriptions_compact_lists_compact_tools_over_stdio(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    server = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "thoughtledger.adapters.cli",
            "serve",
            "--db",
            db,
            "--tools",
            "all",
            "--descriptions",
            "compact",
        ],
        cwd=ROOT,
        env={"DISABLE_THOUGHT_LOGGING": "true"},
    )
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
        answer = await client.call_tool(
            "sequentialthinking",
            {"thought": "t", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False},
        )
    assert [tool.name for tool in tools] == list(TOOL_NAMES)
    for tool in tools:
        assert_within_limits(tool.name, tool.description or "", tool.input_schema)
    assert answer.is_error is False
