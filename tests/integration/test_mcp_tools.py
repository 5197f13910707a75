"""The official tool over MCP, in-process: its scenarios, its coercion, its refusals, sessions.

Every test runs in both protocol eras (``auto`` lands on 2026-07-28, ``legacy`` shakes hands).
The ledger is an SQLite file, as in production.
"""

import json

import pytest

from tests.support.backends import Backend
from tests.support.mcp import (
    Json,
    Mode,
    connect,
    event_count,
    refused,
    think,
    thought,
)
from thoughtledger.adapters.mcp.tools.descriptions import OFFICIAL_DESCRIPTION
from thoughtledger.api.service import Ledger

pytestmark = pytest.mark.anyio

# -- the official server's scenarios ----------------------------------------------------------


async def test_one_thought_answers_the_official_view_with_its_session(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        answer = await think(client, thought(1))
    session_id = answer.pop("sessionId")
    assert answer == {
        "thoughtNumber": 1,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
        "branches": [],
        "thoughtHistoryLength": 1,
    }
    assert (await ledger.state(session_id)).thoughts[0].thought == "thought 1"


async def test_a_revision_on_an_empty_session_is_accepted(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        answer = await think(client, thought(2, isRevision=True, revisesThought=1))
    assert answer["thoughtHistoryLength"] == 1


async def test_three_thoughts_make_a_history_of_three(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        answers = [await think(client, thought(n)) for n in (1, 2, 3)]
    assert [a["thoughtHistoryLength"] for a in answers] == [1, 2, 3]
    assert len({a["sessionId"] for a in answers}) == 1


async def test_a_thought_number_above_the_estimate_raises_the_estimate(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        answer = await think(client, thought(5, total=3))
    assert (answer["thoughtNumber"], answer["totalThoughts"]) == (5, 5)


async def test_two_branches_from_thought_one_are_both_listed(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        await think(client, thought(1))
        await think(client, thought(2, branchFromThought=1, branchId="left"))
        answer = await think(client, thought(2, branchFromThought=1, branchId="right"))
    assert answer["branches"] == ["left", "right"]
    assert answer["thoughtHistoryLength"] == 3


async def test_two_thoughts_in_one_branch_list_one_branch_id(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        await think(client, thought(1))
        await think(client, thought(2, branchFromThought=1, branchId="alt"))
        answer = await think(client, thought(3, branchFromThought=1, branchId="alt"))
    assert answer["branches"] == ["alt"]


async def test_a_branch_id_without_its_origin_registers_no_branch(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        answer = await think(client, thought(1, branchId="orphan"))
    assert answer["branches"] == []


async def test_a_ten_thousand_character_thought_is_kept_whole(ledger: Ledger, mode: Mode) -> None:
    long = "x" * 10_000
    async with connect(ledger, mode) as client:
        answer = await think(client, {**thought(1), "thought": long})
    assert (await ledger.state(answer["sessionId"])).thoughts[0].thought == long


async def test_a_one_of_one_thought_that_needs_no_more_completes(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        answer = await think(client, thought(1, total=1, more=False))
    assert (answer["thoughtNumber"], answer["totalThoughts"]) == (1, 1)
    assert answer["nextThoughtNeeded"] is False
    assert (await ledger.state(answer["sessionId"])).status == "complete"


# -- coercion and refusals --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "sent", "kept"),
    [
        ("thoughtNumber", "3", 3),
        ("thoughtNumber", " 3 ", 3),
        ("thoughtNumber", "3.0", 3),
        ("thoughtNumber", 3.0, 3),
        ("totalThoughts", "10", 10),
        ("nextThoughtNeeded", "true", True),
        ("nextThoughtNeeded", "FALSE", False),
        ("nextThoughtNeeded", "True", True),
        ("isRevision", "false", False),
    ],
)
async def test_numbers_and_booleans_spelled_as_the_official_server_accepts_are_coerced(
    ledger: Ledger, field: str, sent: object, kept: object
) -> None:
    async with connect(ledger, "legacy") as client:
        answer = await think(client, {**thought(3, total=10), field: sent})
    entry = (await ledger.state(answer["sessionId"])).thoughts[0]
    recorded = {
        "thoughtNumber": entry.thought_number,
        "totalThoughts": entry.total_thoughts,
        "nextThoughtNeeded": entry.next_thought_needed,
        "isRevision": entry.is_revision,
    }
    assert recorded[field] == kept


INVALID = [
    pytest.param({"thoughtNumber": 0}, "thoughtNumber: must be at least 1 (got 0)", id="zero"),
    pytest.param({"totalThoughts": 1.5}, "totalThoughts: must be a whole number", id="fraction"),
    pytest.param(
        {"thoughtNumber": "abc"},
        'thoughtNumber: must be a whole number of at least 1 (got "abc")',
        id="abc",
    ),
    pytest.param({"thoughtNumber": "2.5"}, "thoughtNumber: must be a whole", id="fraction-text"),
    pytest.param({"thoughtNumber": True}, "thoughtNumber: must be a whole", id="true-as-number"),
    pytest.param(
        {"nextThoughtNeeded": "yes"},
        'nextThoughtNeeded: must be true or false (or the string "true" or "false") (got "yes")',
        id="yes",
    ),
    pytest.param({"nextThoughtNeeded": "on"}, "nextThoughtNeeded: must be true or false", id="on"),
    pytest.param(
        {"nextThoughtNeeded": "1"}, "nextThoughtNeeded: must be true or false", id="one-text"
    ),
    pytest.param(
        {"nextThoughtNeeded": 1},
        'nextThoughtNeeded: must be true or false (or the string "true" or "false") (got 1)',
        id="one",
    ),
    pytest.param({"isRevision": "yes"}, "isRevision: must be true or false", id="optional-yes"),
    pytest.param({"thought": 42}, "thought: must be a string (got 42)", id="thought-number"),
    pytest.param({"revisesThought": 0}, "revisesThought: must be at least 1", id="revises-zero"),
    pytest.param({"branchId": 7}, "branchId: must be a string", id="branch-id-number"),
]


@pytest.mark.parametrize(("change", "message"), INVALID)
async def test_a_mistyped_argument_is_refused_clearly_and_appends_nothing(
    ledger: Ledger, mode: Mode, change: Json, message: str
) -> None:
    async with connect(ledger, mode) as client:
        before = await event_count(ledger)
        said = await refused(client, "sequentialthinking", {**thought(1), **change})
    assert said.startswith("Invalid sequential thinking params: ")
    assert message in said
    assert await event_count(ledger) == before


@pytest.mark.parametrize(
    "missing", ["thought", "thoughtNumber", "totalThoughts", "nextThoughtNeeded"]
)
async def test_a_missing_required_argument_is_named(
    ledger: Ledger, mode: Mode, missing: str
) -> None:
    arguments = thought(1)
    del arguments[missing]
    async with connect(ledger, mode) as client:
        said = await refused(client, "sequentialthinking", arguments)
    assert said == f"Invalid sequential thinking params: {missing}: required"
    assert await event_count(ledger) == 0


async def test_every_bad_field_is_named_in_one_message(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        said = await refused(client, "sequentialthinking", {"thoughtNumber": 0})
    for field in (
        "thought: required",
        "thoughtNumber: must be at least 1",
        "totalThoughts: required",
    ):
        assert field in said


async def test_an_empty_thought_is_refused_by_the_ledger_and_appends_nothing(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        said = await refused(client, "sequentialthinking", {**thought(1), "thought": ""})
    assert said == "invalid thought: thought: must not be empty"
    assert await event_count(ledger) == 0


async def test_a_malformed_session_id_is_refused_and_appends_nothing(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        said = await refused(client, "sequentialthinking", thought(1, sessionId="a b/c"))
    assert said.startswith("invalid session id 'a b/c'")
    assert await event_count(ledger) == 0


async def test_the_server_keeps_serving_after_refusals(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        await refused(client, "sequentialthinking", {"thought": 1})
        await refused(client, "sequentialthinking", {**thought(1), "thought": ""})
        assert (await refused(client, "nope", {})) == "Unknown tool: nope"
        answer = await think(client, thought(1))
    assert answer["thoughtHistoryLength"] == 1


# -- what tools/list says ---------------------------------------------------------------------

OFFICIAL_PARAMETERS = {
    "thought": ("string", "Your current thinking step"),
    "nextThoughtNeeded": ("boolean", "Whether another thought step is needed"),
    "thoughtNumber": ("integer", "Current thought number (numeric value, e.g., 1, 2, 3)"),
    "totalThoughts": ("integer", "Estimated total thoughts needed (numeric value, e.g., 5, 10)"),
    "isRevision": ("boolean", "Whether this revises previous thinking"),
    "revisesThought": ("integer", "Which thought is being reconsidered"),
    "branchFromThought": ("integer", "Branching point thought number"),
    "branchId": ("string", "Branch identifier"),
    "needsMoreThoughts": ("boolean", "If more thoughts are needed"),
}


async def test_the_official_tool_is_listed_argument_for_argument(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    tool = tools["sequentialthinking"]
    assert tool.title == "Sequential Thinking"
    assert tool.description is not None
    assert tool.description.startswith(OFFICIAL_DESCRIPTION)
    schema = tool.input_schema
    assert schema["required"] == ["thought", "nextThoughtNeeded", "thoughtNumber", "totalThoughts"]
    properties = schema["properties"]
    assert list(properties)[: len(OFFICIAL_PARAMETERS)] == list(OFFICIAL_PARAMETERS)
    for name, (kind, description) in OFFICIAL_PARAMETERS.items():
        assert properties[name]["type"] == kind
        assert properties[name]["description"] == description
    for name in ("thoughtNumber", "totalThoughts", "revisesThought", "branchFromThought"):
        assert properties[name]["minimum"] == 1
    assert set(properties) - set(OFFICIAL_PARAMETERS) == {"sessionId", "clearSession"}
    assert "title" not in json.dumps(schema)


async def test_annotations_say_thinking_writes_and_reading_only_reads(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    thinking, reading = (
        tools["sequentialthinking"].annotations,
        tools["thinking_history"].annotations,
    )
    assert thinking is not None
    assert reading is not None
    assert (thinking.read_only_hint, thinking.destructive_hint, thinking.idempotent_hint) == (
        False,
        False,
        False,
    )
    assert (reading.read_only_hint, reading.destructive_hint, reading.idempotent_hint) == (
        True,
        False,
        True,
    )
    assert thinking.open_world_hint is False
    assert reading.open_world_hint is False


@pytest.mark.parametrize(
    ("tools", "listed"),
    [
        (("sequentialthinking",), ["sequentialthinking"]),
        (
            ("sequential_thinking", "sequential_thinking_external"),
            ["sequential_thinking", "sequential_thinking_external"],
        ),
    ],
)
async def test_only_the_chosen_tools_are_listed(
    ledger: Ledger, tools: tuple[str, ...], listed: list[str]
) -> None:
    async with connect(ledger, "legacy", tools=tools) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == listed
        if "sequentialthinking" not in tools:
            assert (await refused(client, "sequentialthinking", thought(1))).startswith("Unknown")


async def test_the_description_mentions_the_read_tool_only_when_it_is_listed(
    ledger: Ledger,
) -> None:
    both = ("sequentialthinking", "thinking_history")
    for tools, mentioned in ((both, True), (("sequentialthinking",), False)):
        async with connect(ledger, "legacy", tools=tools) as client:
            tool = (await client.list_tools()).tools[0]
        assert tool.description is not None
        assert ("thinking_history" in tool.description) is mentioned


# -- the same scenarios on every backend -------------------------------------------------------


async def test_the_official_scenarios_hold_on_every_backend(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        async with connect(ledger, "auto") as client:
            await think(client, thought(1))
            await think(client, thought(2, isRevision=True, revisesThought=1))
            await think(client, thought(2, branchFromThought=1, branchId="a"))
            answer = await think(client, thought(5, total=3, branchFromThought=1, branchId="b"))
            before = await event_count(ledger)
            await refused(client, "sequentialthinking", thought(0))
        assert answer["branches"] == ["a", "b"]
        assert (answer["thoughtHistoryLength"], answer["totalThoughts"]) == (4, 5)
        assert await event_count(ledger) == before
    finally:
        await ledger.aclose()
