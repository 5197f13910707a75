"""Reading back over MCP: ``thinking_history`` (now and as of a version or time) and resources."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mcp import Client, MCPError

from tests.support.mcp import (
    Json,
    Mode,
    call,
    connect,
    event_count,
    refused,
    resource_text,
    think,
    thought,
)
from thoughtledger.api.bootstrap import open_ledger
from thoughtledger.api.service import Ledger

pytestmark = pytest.mark.anyio


START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand: each thought is recorded at a known time."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def timed_ledger(tmp_path: Path, clock: Clock) -> AsyncIterator[Ledger]:
    async with open_ledger(f"sqlite:///{tmp_path / 'timed.db'}", clock=clock, ttl=None) as opened:
        yield opened


async def history(client: Client, **arguments: object) -> Json:
    return await call(client, "thinking_history", dict(arguments))


async def test_history_reads_this_connections_thoughts_back(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        await think(client, thought(1))
        await think(client, thought(2, isRevision=True, revisesThought=1))
        read = await history(client)
    assert read["status"] == "revision"
    assert read["thoughtHistoryLength"] == 2
    assert [(t["thoughtNumber"], t["kind"]) for t in read["history"]] == [
        (1, "thought.recorded"),
        (2, "thought.revised"),
    ]
    assert read["history"][1]["revisesThought"] == 1


async def test_history_as_of_a_version_is_the_session_as_it_was(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        for n in (1, 2, 3):
            await think(client, thought(n))
        read = await history(client, asOfVersion=3)  # session.started, thoughts 1 and 2
    assert read["version"] == 3
    assert read["asOfVersion"] == 3
    assert [t["thought"] for t in read["history"]] == ["thought 1", "thought 2"]


async def test_history_as_of_a_time_is_the_session_as_it_was(
    timed_ledger: Ledger, clock: Clock, mode: Mode
) -> None:
    async with connect(timed_ledger, mode) as client:
        for n in (1, 2, 3):
            clock.now = START + timedelta(minutes=n)
            await think(client, thought(n))
        read = await history(client, asOfTime="2025-03-01T10:02:30+01:00")
        too_early = await refused(client, "thinking_history", {"asOfTime": "2025-03-01T08:00:00Z"})
    assert [t["thought"] for t in read["history"]] == ["thought 1", "thought 2"]
    assert read["asOfTime"] == "2025-03-01T09:02:30.000000Z"
    assert "had no events yet" in too_early


async def test_branches_and_the_session_view_can_be_read_as_of_a_version(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        await think(client, thought(1))
        await think(client, thought(2, branchFromThought=1, branchId="left"))
        await think(client, thought(3, branchFromThought=1, branchId="left"))
        answer = await think(client, thought(2, branchFromThought=1, branchId="right"))
        branches = await history(client, show="branches")
        earlier = await history(client, show="branches", asOfVersion=3)
        view = await history(client, show="view", sessionId=answer["sessionId"])
    assert [(b["branchId"], len(b["thoughts"])) for b in branches["branches"]] == [
        ("left", 2),
        ("right", 1),
    ]
    assert [b["branchId"] for b in earlier["branches"]] == ["left"]
    assert view["view"]["branches"] == ["left", "right"]
    assert view["view"]["thoughtHistoryLength"] == 4


async def test_a_cleared_session_is_still_readable_by_its_old_id(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        first = await think(client, thought(1))
        await think(client, thought(1, clearSession=True))
        old = await history(client, sessionId=first["sessionId"])
        current = await history(client)
    assert (old["status"], old["thoughtHistoryLength"]) == ("cleared", 1)
    assert current["sessionId"] != first["sessionId"]


async def test_reading_never_appends(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        await think(client, thought(1))
        before = await event_count(ledger)
        await history(client)
        await history(client, show="view")
        await resource_text(client, "thoughtledger://sessions")
    assert await event_count(ledger) == before


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"sessionId": "nobody"}, "no session 'nobody' in this ledger"),
        ({"asOfVersion": 0}, "Invalid thinking_history params: asOfVersion: must be at least 1"),
        ({"asOfVersion": 99}, "as_of_version 99 is past its end"),
        ({"asOfTime": "2025-03-01T10:00:00"}, "asOfTime: Input should have timezone info"),
        ({"show": "everything"}, "Invalid thinking_history params: show: Input should be"),
        ({"asOfVersion": 2, "asOfTime": "2025-03-01T10:00:00Z"}, "not both"),
    ],
)
async def test_bad_reads_are_refused_with_a_message_the_model_can_act_on(
    ledger: Ledger, mode: Mode, arguments: Json, message: str
) -> None:
    async with connect(ledger, mode) as client:
        await think(client, thought(1))
        said = await refused(client, "thinking_history", arguments)
    assert message in said


async def test_reading_before_thinking_says_what_to_do(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        said = await refused(client, "thinking_history", {})
    assert said.startswith("no thoughts recorded on this connection yet")


async def test_sessions_are_listed_and_read_as_resources(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode) as client:
        answer = await think(client, thought(1))
        await think(client, thought(2, branchFromThought=1, branchId="b"))
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        listing = await resource_text(client, "thoughtledger://sessions")
        session = await resource_text(client, f"thoughtledger://sessions/{answer['sessionId']}")
    assert [str(r.uri) for r in resources] == ["thoughtledger://sessions"]
    assert sorted(t.uri_template for t in templates) == [
        "thoughtledger://sessions/page/{cursor}",
        "thoughtledger://sessions/{session_id}",
    ]
    [summary] = listing["sessions"]
    assert summary["sessionId"] == answer["sessionId"]
    assert summary["uri"] == f"thoughtledger://sessions/{answer['sessionId']}"
    assert (summary["thoughtHistoryLength"], summary["branches"]) == (2, ["b"])
    assert [t["thought"] for t in session["thoughts"]] == ["thought 1", "thought 2"]
    assert session["branchSets"][0]["branchId"] == "b"
    assert session["metadata"]["tool"] == "sequentialthinking"
    assert session["metadata"]["client"].startswith("mcp")


async def test_an_unknown_session_resource_is_an_invalid_params_error(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("thoughtledger://sessions/nobody")
    assert raised.value.error.code == -32602
    assert "nobody" in raised.value.error.message


async def test_an_idle_connection_session_expires_and_continues_under_a_new_id(
    tmp_path: Path, clock: Clock, mode: Mode
) -> None:
    url = f"sqlite:///{tmp_path / 'ttl.db'}"
    async with (
        open_ledger(url, clock=clock, ttl=timedelta(minutes=30)) as ledger,
        connect(ledger, mode) as client,
    ):
        first = await think(client, thought(1))
        clock.now += timedelta(minutes=31)
        after = await think(client, thought(2))
        again = await think(client, thought(3))
        old = await history(client, sessionId=first["sessionId"])
    assert after["sessionId"] != first["sessionId"]
    assert after["thoughtHistoryLength"] == 1
    assert (again["sessionId"], again["thoughtHistoryLength"]) == (after["sessionId"], 2)
    assert (old["status"], old["thoughtHistoryLength"]) == ("expired", 1)
