"""Answer profiles and sessions over MCP: what each profile says, which session a thought joins."""

import pytest
from mcp import Client

from tests.support.mcp import Mode, connect, refused, think, thought
from thoughtledger.adapters.mcp import create_server
from thoughtledger.adapters.mcp.tools.context import ProfileName
from thoughtledger.api.service import Ledger

pytestmark = pytest.mark.anyio


# -- profiles ---------------------------------------------------------------------------------


async def test_the_minimal_profile_answers_000s_four_keys_and_the_session(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode, profile="minimal") as client:
        await think(client, thought(1))
        answer = await think(client, thought(2, branchFromThought=1, branchId="b"))
    session_id = answer.pop("sessionId")
    assert answer == {
        "thought": "thought 2",
        "thoughtNumber": 2,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
    }
    assert len((await ledger.state(session_id)).thoughts) == 2


async def test_the_full_profile_answers_001s_session_view_with_a_summary_at_the_end(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode, profile="full") as client:
        first = await think(client, thought(1, total=2))
        last = await think(client, thought(2, total=2, more=False, isRevision=True))
    assert "summary" not in first
    assert last["sessionId"] == first["sessionId"]
    assert last["thoughtHistory"] == [
        {"thoughtNumber": 1, "thought": "thought 1"},
        {"thoughtNumber": 2, "thought": "thought 2", "isRevision": True},
    ]
    assert last["thoughtHistoryLength"] == 2
    assert (
        last["summary"] == "Sequential thinking complete: 2 thoughts processed across 0 branches."
    )


@pytest.mark.parametrize(
    ("profile", "keys"),
    [
        (
            "minimal",
            {"thought", "thoughtNumber", "totalThoughts", "nextThoughtNeeded", "sessionId"},
        ),
        (
            "official",
            {
                "thoughtNumber",
                "totalThoughts",
                "nextThoughtNeeded",
                "branches",
                "thoughtHistoryLength",
                "sessionId",
            },
        ),
        (
            "full",
            {
                "sessionId",
                "thoughtNumber",
                "totalThoughts",
                "nextThoughtNeeded",
                "branches",
                "thoughtHistoryLength",
                "thoughtHistory",
                "summary",
            },
        ),
    ],
)
async def test_each_profile_publishes_the_output_schema_it_answers(
    ledger: Ledger, profile: ProfileName, keys: set[str]
) -> None:
    async with connect(ledger, "auto", profile=profile) as client:
        tool = (await client.list_tools()).tools[0]
        answer = await think(client, thought(1, total=1, more=False))
    assert tool.output_schema is not None
    assert set(tool.output_schema["properties"]) == keys
    assert set(answer) == keys


# -- sessions ---------------------------------------------------------------------------------


async def test_each_connection_thinks_in_its_own_session(ledger: Ledger, mode: Mode) -> None:
    server = create_server(ledger)
    async with Client(server, mode=mode) as one, Client(server, mode=mode) as two:
        a1 = await think(one, thought(1))
        b1 = await think(two, thought(1))
        a2 = await think(one, thought(2))
    assert a1["sessionId"] == a2["sessionId"] != b1["sessionId"]
    assert (a2["thoughtHistoryLength"], b1["thoughtHistoryLength"]) == (2, 1)


async def test_a_session_id_continues_that_session_from_another_connection(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        first = await think(client, thought(1))
    async with connect(ledger, mode) as client:
        second = await think(client, thought(2, sessionId=first["sessionId"]))
    assert second["sessionId"] == first["sessionId"]
    assert second["thoughtHistoryLength"] == 2


async def test_clear_session_starts_afresh_under_a_new_id_and_keeps_the_old_history(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        first = await think(client, thought(1))
        await think(client, thought(2))
        cleared = await think(client, thought(1, total=5, clearSession=True))
        after = await think(client, thought(2, total=5))
    assert cleared["thoughtHistoryLength"] == 1
    assert cleared["sessionId"] != first["sessionId"]
    assert after["sessionId"] == cleared["sessionId"]
    assert after["thoughtHistoryLength"] == 2
    old = await ledger.state(first["sessionId"])
    assert (old.status, len(old.thoughts)) == ("cleared", 2)


async def test_clearing_a_named_session_moves_that_name_to_the_new_session(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        await think(client, thought(1, sessionId="plan-7"))
        cleared = await think(client, thought(1, sessionId="plan-7", clearSession=True))
        again = await think(client, thought(2, sessionId="plan-7"))
    assert cleared["sessionId"] != "plan-7"
    assert again["sessionId"] == cleared["sessionId"]
    assert again["thoughtHistoryLength"] == 2


async def test_each_recorded_thought_is_rendered_like_the_official_server(
    ledger: Ledger,
) -> None:
    rendered: list[str] = []
    async with connect(ledger, "legacy", thought_sink=rendered.append) as client:
        await think(client, thought(1))
        await think(client, thought(2, isRevision=True, revisesThought=1))
        await think(client, thought(3, branchFromThought=1, branchId="b"))
        await refused(client, "sequentialthinking", {"thought": 1})
    assert len(rendered) == 3
    assert "│ 💭 Thought 1/3" in rendered[0]
    assert "│ thought 1" in rendered[0]
    assert "🔄 Revision 2/3 (revising thought 1)" in rendered[1]
    assert "🌿 Branch 3/3 (from thought 1, ID: b)" in rendered[2]
