"""One session per run: an agent that starts again at thought 1 on its connection is on a new
problem, recorded as a new session linked to the one before (unless ``--runs continuous``)."""

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.support.mcp import Json, connect, think, thought
from tests.support.processes import ROOT, child_env, serve_command, sqlite_in
from thoughtledger import Ledger

pytestmark = pytest.mark.anyio


def problem(name: str, steps: int) -> list[Json]:
    return [
        {**thought(n, steps, more=n < steps), "thought": f"{name}: step {n}"}
        for n in range(1, steps + 1)
    ]


async def test_a_stdio_client_solving_two_problems_gets_two_linked_sessions(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    server = StdioServerParameters(
        command=sys.executable, args=serve_command(db)[1:], cwd=ROOT, env=child_env()
    )
    async with Client(server) as client:
        first = [await think(client, call) for call in problem("primes", 3)]
        second = [await think(client, call) for call in problem("sorting", 2)]
        listing = await client.read_resource("thoughtledger://sessions")
        later = await client.call_tool("thinking_history", {})
    first_id, second_id = first[0]["sessionId"], second[0]["sessionId"]
    assert {answer["sessionId"] for answer in first} == {first_id}
    assert {answer["sessionId"] for answer in second} == {second_id}
    assert first_id != second_id
    assert second[-1]["thoughtHistoryLength"] == 2
    # The connection now continues the second run: its history is that run's alone.
    assert later.structured_content is not None
    assert [t["thought"] for t in later.structured_content["history"]] == [
        "sorting: step 1",
        "sorting: step 2",
    ]
    async with Client(server) as reader:
        session = await reader.read_resource(f"thoughtledger://sessions/{second_id}")
    text = session.contents[0]
    assert getattr(text, "text", None) is not None
    assert f'"predecessorId": "{first_id}"' in text.text  # type: ignore[union-attr]
    assert listing.contents


async def test_continuous_runs_keep_one_accumulating_history(ledger: Ledger) -> None:
    async with connect(ledger, "legacy", runs="continuous") as client:
        answers = [await think(client, call) for call in problem("a", 2) + problem("b", 2)]
    assert len({answer["sessionId"] for answer in answers}) == 1
    assert answers[-1]["thoughtHistoryLength"] == 4


@pytest.mark.parametrize(
    "restart",
    [
        {"isRevision": True, "revisesThought": 1},
        {"branchFromThought": 1, "branchId": "alt"},
    ],
    ids=["revision", "branch"],
)
async def test_a_revision_or_branch_numbered_1_stays_in_the_run(
    ledger: Ledger, restart: Json
) -> None:
    async with connect(ledger, "legacy") as client:
        before = await think(client, thought(1, 3))
        again = await think(client, thought(1, 3, **restart))
    assert again["sessionId"] == before["sessionId"]


async def test_a_named_session_is_never_split(ledger: Ledger) -> None:
    async with connect(ledger, "legacy") as client:
        one = await think(client, {**thought(1, 2), "sessionId": "task"})
        two = await think(client, {**thought(1, 2), "sessionId": "task"})
    assert one["sessionId"] == two["sessionId"] == "task"
    assert two["thoughtHistoryLength"] == 2
