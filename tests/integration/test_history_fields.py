"""Every history view keeps what makes a thought a revision or a branch.

A revision that does not say which thought it revises, or a branch thought that does not say
which branch it is on, reads as one plain line of thought. The session pattern's thought record
has ``revisesThought``, ``branchFromThought``, ``branchId`` and ``needsMoreThoughts``; each view
of the history must show them when a thought was recorded with them: the Python API's
``view("full")``, the MCP tools (``--profile full`` and ``thinking_history show=view``) and
the in-process tool.
"""

from typing import Any

import pytest

from tests.support.mcp import Json, Mode, call, connect, think
from thoughtledger import Ledger, sequential_thinking_tool

pytestmark = pytest.mark.anyio

# A revision, a branch, and a thought that asks for more: camelCase, as the tools take them.
STEPS: list[Json] = [
    {"thought": "Map the failure modes", "thoughtNumber": 1, "totalThoughts": 3},
    {"thought": "Start from the logs", "thoughtNumber": 2, "totalThoughts": 3},
    {
        "thought": "Correction: the logs rotate hourly",
        "thoughtNumber": 3,
        "totalThoughts": 4,
        "isRevision": True,
        "revisesThought": 2,
    },
    {
        "thought": "Try the cache first",
        "thoughtNumber": 4,
        "totalThoughts": 4,
        "branchFromThought": 1,
        "branchId": "cache-first",
        "needsMoreThoughts": True,
    },
]

EXPECTED_HISTORY: list[Json] = [
    {"thoughtNumber": 1, "thought": "Map the failure modes"},
    {"thoughtNumber": 2, "thought": "Start from the logs"},
    {
        "thoughtNumber": 3,
        "thought": "Correction: the logs rotate hourly",
        "isRevision": True,
        "revisesThought": 2,
    },
    {
        "thoughtNumber": 4,
        "thought": "Try the cache first",
        "branchFromThought": 1,
        "branchId": "cache-first",
        "needsMoreThoughts": True,
    },
]

SNAKE = {
    "thoughtNumber": "thought_number",
    "totalThoughts": "total_thoughts",
    "isRevision": "is_revision",
    "revisesThought": "revises_thought",
    "branchFromThought": "branch_from_thought",
    "branchId": "branch_id",
    "needsMoreThoughts": "needs_more_thoughts",
}


def snake(step: Json) -> dict[str, Any]:
    return {SNAKE.get(key, key): value for key, value in step.items()}


async def test_the_python_session_view_keeps_revision_and_branch_fields(ledger: Ledger) -> None:
    session = await ledger.new_session()
    for step in STEPS:
        await session.think(next_thought_needed=True, **snake(step))
    view = await session.view("full")
    assert view["thoughtHistory"] == EXPECTED_HISTORY
    assert view["branches"] == ["cache-first"]
    # As of an earlier version, the revision keeps its target too.
    earlier = await session.view("full", as_of_version=4)
    assert earlier["thoughtHistory"] == EXPECTED_HISTORY[:3]


async def test_the_full_profile_answers_revision_and_branch_fields(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode, profile="full") as client:
        answers = [await think(client, {**step, "nextThoughtNeeded": True}) for step in STEPS]
    assert answers[-1]["thoughtHistory"] == EXPECTED_HISTORY
    assert answers[2]["thoughtHistory"] == EXPECTED_HISTORY[:3]


async def test_thinking_history_show_view_keeps_revision_and_branch_fields(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        for step in STEPS:
            await think(client, {**step, "nextThoughtNeeded": True})
        read = await call(client, "thinking_history", {"show": "view"})
        cut = await call(client, "thinking_history", {"show": "view", "asOfVersion": 4})
    assert read["view"]["thoughtHistory"] == EXPECTED_HISTORY
    assert cut["view"]["thoughtHistory"] == EXPECTED_HISTORY[:3]


async def test_the_in_process_tool_answers_revision_and_branch_fields(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    answers = [await tool.execute({**step, "nextThoughtNeeded": True}) for step in STEPS]
    assert answers[-1]["thoughtHistory"] == EXPECTED_HISTORY
    windowed = sequential_thinking_tool(ledger, tool.session_id, history_window=2)
    answer = await windowed.execute(
        {"thought": "Keep both", "thoughtNumber": 5, "totalThoughts": 5, "nextThoughtNeeded": False}
    )
    assert answer["thoughtHistory"] == [
        EXPECTED_HISTORY[-1],
        {"thoughtNumber": 5, "thought": "Keep both"},
    ]
