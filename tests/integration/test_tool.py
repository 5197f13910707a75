"""The in-process tool (the session pattern) on a real SQLite ledger: sessions, windows, errors,
many agents."""

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import python_output
from tests.support.raw_store import raw_store
from thoughtledger import InvalidInputError, InvalidThoughtError, Ledger, open_ledger
from thoughtledger.adapters.tool import SequentialThinkingTool, sequential_thinking_tool

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'ledger.db'}"


def call(number: int, total: int = 3, *, more: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": more,
        **extra,
    }


async def thoughts_in(ledger: Ledger, session_id: str) -> list[str]:
    return [entry.thought for entry in (await ledger.state(session_id)).thoughts]


# -- the session pattern's testing guide -----------------------------------------------------------


async def test_the_first_call_creates_a_session(ledger: Ledger) -> None:
    result = await sequential_thinking_tool(ledger).execute(
        {
            "thought": "First thought",
            "thoughtNumber": 1,
            "totalThoughts": 5,
            "nextThoughtNeeded": True,
        }
    )
    assert result["sessionId"]
    assert result["thoughtHistoryLength"] == 1
    assert await thoughts_in(ledger, result["sessionId"]) == ["First thought"]


async def test_a_call_with_the_session_id_continues_that_session(ledger: Ledger) -> None:
    first = await sequential_thinking_tool(ledger).execute(call(1))
    second = await sequential_thinking_tool(ledger).execute(
        call(2, more=False, sessionId=first["sessionId"])
    )
    assert second["sessionId"] == first["sessionId"]
    assert second["thoughtHistoryLength"] == 2
    assert second["summary"] == (
        "Sequential thinking complete: 2 thoughts processed across 0 branches."
    )


async def test_a_revision_is_flagged_in_the_history(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    first = await tool.execute({**call(1), "thought": "Initial assumption"})
    revision = await tool.execute(
        {
            "thought": "Revised: Actually, the assumption was wrong",
            "thoughtNumber": 2,
            "totalThoughts": 3,
            "nextThoughtNeeded": False,
            "sessionId": first["sessionId"],
            "isRevision": True,
            "revisesThought": 1,
        }
    )
    assert revision["thoughtHistory"][1]["isRevision"] is True
    assert "isRevision" not in revision["thoughtHistory"][0]
    state = await ledger.state(first["sessionId"])
    assert state.thoughts[1].kind == "thought.revised"


async def test_clear_session_starts_afresh_under_a_new_id(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    first = await tool.execute(call(1))
    cleared = await tool.execute(
        call(1, 5, sessionId=first["sessionId"], clearSession=True) | {"thought": "Fresh start"}
    )
    assert cleared["thoughtHistoryLength"] == 1
    assert cleared["sessionId"] != first["sessionId"]
    old = await ledger.state(first["sessionId"])
    assert old.ended is not None
    assert (await ledger.state(cleared["sessionId"])).predecessor_id == first["sessionId"]


# -- which session a call continues ----------------------------------------------------------------


async def test_an_instance_continues_its_own_session_without_being_told(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    assert tool.session_id is None
    answers = [await tool.execute(call(n, more=n < 3)) for n in (1, 2, 3)]
    assert {a["sessionId"] for a in answers} == {tool.session_id}
    assert answers[-1]["thoughtHistoryLength"] == 3


async def test_a_session_id_bound_at_creation_wins_over_the_argument(ledger: Ledger) -> None:
    other = await sequential_thinking_tool(ledger).execute(call(1))
    tool = sequential_thinking_tool(ledger, "planner-7")
    answer = await tool.execute(call(1, sessionId=other["sessionId"]))
    assert answer["sessionId"] == "planner-7"
    assert await thoughts_in(ledger, other["sessionId"]) == ["thought 1"]
    assert await thoughts_in(ledger, "planner-7") == ["thought 1"]


async def test_a_bound_instance_follows_its_session_through_a_clear(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger, "planner-7")
    await tool.execute(call(1))
    fresh = await tool.execute(call(1, clearSession=True))
    after = await tool.execute(call(2))
    assert fresh["sessionId"] != "planner-7"
    assert tool.session_id == fresh["sessionId"] == after["sessionId"]
    assert after["thoughtHistoryLength"] == 2


async def test_an_explicit_session_id_moves_the_instance_to_that_session(ledger: Ledger) -> None:
    earlier = await sequential_thinking_tool(ledger).execute(call(1))
    tool = sequential_thinking_tool(ledger)
    await tool.execute(call(1))
    await tool.execute(call(2, sessionId=earlier["sessionId"]))
    latest = await tool.execute(call(3))
    assert latest["sessionId"] == earlier["sessionId"]
    assert await thoughts_in(ledger, earlier["sessionId"]) == [
        "thought 1",
        "thought 2",
        "thought 3",
    ]


async def test_a_parent_passes_its_session_down_and_a_sub_agent_gets_its_own(
    ledger: Ledger,
) -> None:
    parent = sequential_thinking_tool(ledger, metadata={"agent": "parent"})
    await parent.execute(call(1))
    assert parent.session_id is not None
    helper = sequential_thinking_tool(ledger, parent.session_id)
    explorer = sequential_thinking_tool(ledger, metadata={"agent": "explorer"})
    await helper.execute(call(2))
    mine = await explorer.execute(call(1))
    assert await thoughts_in(ledger, parent.session_id) == ["thought 1", "thought 2"]
    assert mine["sessionId"] != parent.session_id
    state = await ledger.state(mine["sessionId"])
    assert state.metadata["agent"] == "explorer"
    assert state.metadata["tool"] == "sequentialthinking"
    assert state.metadata["transport"] == "in-process"


async def test_an_expired_session_continues_in_a_new_one(tmp_path: Path) -> None:
    now = [datetime(2025, 1, 1, tzinfo=UTC)]
    async with open_ledger(url(tmp_path), ttl=timedelta(minutes=30), clock=lambda: now[0]) as led:
        tool = sequential_thinking_tool(led)
        first = await tool.execute(call(1))
        now[0] += timedelta(hours=1)
        later = await tool.execute(call(2))
    assert later["sessionId"] != first["sessionId"]
    assert later["thoughtHistoryLength"] == 1
    assert tool.session_id == later["sessionId"]


# -- the answer ------------------------------------------------------------------------------------


async def test_the_answer_has_exactly_001s_keys(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    await tool.execute(call(1))
    branched = await tool.execute(call(2, branchFromThought=1, branchId="alt"))
    done = await tool.execute(call(3, more=False))
    keys = {
        "sessionId",
        "thoughtNumber",
        "totalThoughts",
        "nextThoughtNeeded",
        "thoughtHistory",
        "branches",
        "thoughtHistoryLength",
    }
    assert set(branched) == keys
    assert branched["branches"] == ["alt"]
    assert set(done) == keys | {"summary"}
    assert (
        done["summary"] == "Sequential thinking complete: 3 thoughts processed across 1 branches."
    )


async def test_a_history_window_keeps_only_the_last_thoughts(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger, history_window=2)
    for n in range(1, 6):
        answer = await tool.execute(call(n, 5))
    assert [t["thoughtNumber"] for t in answer["thoughtHistory"]] == [4, 5]
    assert answer["thoughtHistoryLength"] == 5
    assert tool.session_id is not None
    assert len(await thoughts_in(ledger, tool.session_id)) == 5


async def test_the_whole_history_is_returned_by_default(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    for n in range(1, 6):
        answer = await tool.execute(call(n, 5))
    assert [t["thoughtNumber"] for t in answer["thoughtHistory"]] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("window", [0, -1, True, 2.5])
async def test_a_history_window_below_one_is_refused(ledger: Ledger, window: Any) -> None:
    with pytest.raises(InvalidInputError, match="history_window"):
        sequential_thinking_tool(ledger, history_window=window)


async def test_a_malformed_bound_session_id_is_refused(ledger: Ledger) -> None:
    with pytest.raises(InvalidInputError, match="session id"):
        sequential_thinking_tool(ledger, "no spaces please")


async def test_arguments_may_arrive_as_the_json_text_a_model_sent(ledger: Ledger) -> None:
    answer = await sequential_thinking_tool(ledger).execute(json.dumps(call(1)))
    assert answer["thoughtHistory"] == [{"thoughtNumber": 1, "thought": "thought 1"}]


async def test_whole_numbers_sent_as_floats_and_null_optionals_are_accepted(
    ledger: Ledger,
) -> None:
    # Both are what a JSON Schema validator or a framework may hand over for a valid call.
    answer = await sequential_thinking_tool(ledger).execute(
        call(1) | {"thoughtNumber": 1.0, "branchId": None, "isRevision": None}
    )
    assert answer["thoughtNumber"] == 1
    assert answer["thoughtHistory"] == [{"thoughtNumber": 1, "thought": "thought 1"}]


# -- invalid arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"thought": "x", "totalThoughts": 3, "nextThoughtNeeded": True},
            "thoughtNumber: required",
        ),
        (call(0), "thoughtNumber: Input should be greater than or equal to 1"),
        (call(1) | {"totalThoughts": "3"}, "totalThoughts: Input should be a valid integer"),
        (call(1) | {"thoughtNumber": 2.5}, "thoughtNumber"),
        (call(1) | {"nextThoughtNeeded": "yes"}, "nextThoughtNeeded: Input should be a valid bool"),
        (call(1) | {"isRevision": 1}, "isRevision"),
        (call(1) | {"revisesThought": 0}, "revisesThought"),
        (call(1) | {"branchId": "b" * 257}, "branchId"),
        (call(1) | {"thought": ""}, "thought: must not be empty"),
        (call(1) | {"sessionId": "has spaces"}, "sessionId: invalid session id"),
        (call(1) | {"clearSession": "true"}, "clearSession"),
        (call(1) | {"thought_number": 1}, "thought_number: unknown field; spell it thoughtNumber"),
        (call(1) | {"mood": "bold"}, "mood: unknown field"),
        ("{not json", "arguments are not JSON"),
        ("[1, 2]", "arguments must be an object"),
    ],
)
async def test_invalid_arguments_name_the_field_and_record_nothing(
    ledger: Ledger, arguments: dict[str, Any] | str, message: str
) -> None:
    tool = sequential_thinking_tool(ledger)
    with pytest.raises(InvalidThoughtError, match="invalid thought") as raised:
        await tool.execute(arguments)
    assert message in str(raised.value)
    assert isinstance(raised.value, ValueError)
    assert await raw_store(ledger).read_all() == []
    assert tool.session_id is None


async def test_an_oversize_thought_is_refused_by_the_ledgers_limit(tmp_path: Path) -> None:
    async with open_ledger(url(tmp_path), max_thought_bytes=64) as small:
        with pytest.raises(InvalidThoughtError, match="thought is 100 bytes"):
            await sequential_thinking_tool(small).execute(call(1) | {"thought": "x" * 100})
        assert await raw_store(small).read_all() == []


# -- many agents at once ---------------------------------------------------------------------------


async def test_fifty_concurrent_instances_keep_every_thought_in_its_own_session(
    tmp_path: Path,
) -> None:
    agents = 50

    async def think(tool: SequentialThinkingTool, agent: int) -> list[str]:
        ids = []
        for n in (1, 2, 3):
            answer = await tool.execute(
                call(n, more=n < 3) | {"thought": f"agent {agent} step {n}"}
            )
            ids.append(answer["sessionId"])
        return ids

    async with open_ledger(url(tmp_path)) as ledger:
        tools = [
            sequential_thinking_tool(ledger, metadata={"agent": str(i)}) for i in range(agents)
        ]
        seen = await asyncio.gather(*(think(tool, i) for i, tool in enumerate(tools)))
    assert all(len(set(ids)) == 1 for ids in seen)
    assert len({ids[0] for ids in seen}) == agents
    # Read back through a fresh ledger: what is on disk, not what a cache remembers.
    async with open_ledger(url(tmp_path)) as reread:
        for agent, ids in enumerate(seen):
            state = await reread.state(ids[0])
            assert state.metadata["agent"] == str(agent)
            assert [t.thought for t in state.thoughts] == [
                f"agent {agent} step {n}" for n in (1, 2, 3)
            ]
            assert (await reread.verify(ids[0])).ok
        assert len(await reread.list_sessions(limit=agents + 1)) == agents


async def test_concurrent_first_calls_on_one_instance_open_one_session(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    answers = await asyncio.gather(*(tool.execute(call(n, 5)) for n in range(1, 6)))
    assert len({a["sessionId"] for a in answers}) == 1
    assert sorted(a["thoughtHistoryLength"] for a in answers) == [1, 2, 3, 4, 5]


def test_the_core_tool_imports_no_agent_framework() -> None:
    code = (
        "import sys, thoughtledger.adapters.tool, thoughtledger.adapters.tool.frameworks; "
        "loaded = {'agents', 'pydantic_ai', 'langchain_core'} & set(sys.modules); "
        "print(sorted(loaded))"
    )
    assert python_output(code).strip() == "[]"
