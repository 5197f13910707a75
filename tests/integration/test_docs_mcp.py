"""The MCP page's list of tools says what the server really takes and answers.

Each tool line of ``docs/mcp.md`` (``- `name(required[, optional])` ``) must list exactly the
arguments the tool publishes, the required ones first; each ``--profile`` line the keys the
official tool answers with in that profile; the snake_case tool's line its answer's keys.
"""

import re

import pytest
from mcp import Client

from tests.support.docs import page
from tests.support.mcp import Json, call
from thoughtledger import Ledger
from thoughtledger.adapters.mcp import TOOL_NAMES, create_server
from thoughtledger.adapters.mcp.tools.context import ProfileName

pytestmark = pytest.mark.anyio

MCP_PAGE = page("mcp.md").read_text(encoding="utf-8")


def names(listed: str) -> tuple[list[str], list[str]]:
    """``a, b[, c, d]`` -> (``[a, b]``, ``[c, d]``): what is always there, what may be."""
    always, _, maybe = listed.partition("[")
    return re.findall(r"\w+", always), re.findall(r"\w+", maybe)


def documented_tools() -> dict[str, tuple[list[str], list[str]]]:
    found = re.findall(r"^- `(\w+)\(([^)]*)\)`", MCP_PAGE, re.MULTILINE)
    return {tool: names(arguments) for tool, arguments in found}


def documented_answer(where: str) -> tuple[list[str], list[str]]:
    """The keys listed in the first backticked span the pattern ``where`` captures."""
    match = re.search(where, MCP_PAGE)
    assert match is not None, where
    return names(match.group(1))


async def test_the_mcp_page_lists_every_tool_with_its_arguments(ledger: Ledger) -> None:
    documented = documented_tools()
    server = create_server(ledger, tools=TOOL_NAMES)
    async with Client(server, mode="legacy") as client:
        tools = (await client.list_tools()).tools
    assert sorted(documented) == sorted(TOOL_NAMES)
    for tool in tools:
        required, optional = documented[tool.name]
        schema = tool.input_schema
        assert sorted(schema.get("required", [])) == sorted(required), tool.name
        assert sorted(schema["properties"]) == sorted(required + optional), tool.name


@pytest.mark.parametrize("profile", ["official", "minimal", "full"])
async def test_the_mcp_page_says_what_each_profile_answers(
    ledger: Ledger, profile: ProfileName
) -> None:
    always, maybe = documented_answer(rf"`--profile {profile}`[^`\n]*: `([^`]*)`")
    server = create_server(ledger, profile=profile)
    arguments: Json = {"thought": "t", "thoughtNumber": 1, "totalThoughts": 2}
    async with Client(server, mode="legacy") as client:
        going = await call(client, "sequentialthinking", {**arguments, "nextThoughtNeeded": True})
        done = await call(
            client,
            "sequentialthinking",
            {**arguments, "thoughtNumber": 2, "nextThoughtNeeded": False},
        )
    assert list(going) == always
    assert set(done) - set(always) <= set(maybe)
    assert "sessionId" in going  # every profile answers the session's handle


async def test_the_mcp_page_says_what_sequential_thinking_answers(ledger: Ledger) -> None:
    always, maybe = documented_answer(r"answers `(thought_number[^`]*)`")
    server = create_server(ledger, tools=["sequential_thinking"])
    arguments: Json = {
        "thought": "t",
        "thought_number": 1,
        "total_thoughts": 1,
        "next_thought_needed": False,
    }
    async with Client(server, mode="legacy") as client:
        default = await call(client, "sequential_thinking", arguments)
        named = await call(client, "sequential_thinking", {**arguments, "session_id": "mine"})
    assert list(default) == always
    assert list(named) == always + maybe
