"""``sequential_thinking_batch`` as users run it: the SDK's client, a real server on stdio and HTTP.

Each server is a ``thoughtledger serve --tools all`` child process on an SQLite file; each test
runs in both protocol eras (``auto`` lands on 2026-07-28, ``legacy`` is the handshake era).
"""

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.support.auth import serving_with_auth
from tests.support.mcp import Json, Mode, call, refused, thought
from tests.support.processes import ROOT, child_env, serve_command, serving_http, sqlite_in
from thoughtledger.api.bootstrap import open_ledger

pytestmark = pytest.mark.anyio

MODES: list[Mode] = ["auto", "legacy"]
BATCH = "sequential_thinking_batch"


@asynccontextmanager
async def stdio_client(db: str, mode: Mode, *options: str) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=serve_command(db, *options)[1:],
        cwd=ROOT,
        env=child_env(DISABLE_THOUGHT_LOGGING="true"),
    )
    async with Client(server, mode=mode) as client:
        yield client


@asynccontextmanager
async def http_client(db: str, mode: Mode, *options: str) -> AsyncIterator[Client]:
    async with serving_http(db, *options) as url, Client(url, mode=mode) as client:
        yield client


CLIENTS = {"stdio": stdio_client, "http": http_client}


async def event_total(db: str) -> int:
    async with open_ledger(db, read_only=True) as ledger:
        return sum(head.version for head in await ledger.all_heads())


def without_session(answer: Json) -> Json:
    return {key: value for key, value in answer.items() if key != "sessionId"}


THOUGHTS = [
    thought(1, 4),
    thought(2, 4, branchFromThought=1, branchId="alt"),
    thought(3, 4, isRevision=True, revisesThought=1),
    thought(4, 4, more=False, branchFromThought=1, branchId="alt"),
]


@pytest.mark.parametrize("transport", list(CLIENTS))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("profile", ["official", "full"])
async def test_a_batch_answers_each_thought_as_sequentialthinking_would(
    tmp_path: Path, transport: str, mode: Mode, profile: str
) -> None:
    db = sqlite_in(tmp_path)
    async with CLIENTS[transport](db, mode, "--tools", "all", "--profile", profile) as client:
        singles = [
            await call(client, "sequentialthinking", {**item, "sessionId": "one-by-one"})
            for item in THOUGHTS
        ]
        batch = await call(client, BATCH, {"thoughts": THOUGHTS, "sessionId": "all-at-once"})
        # The named session goes on as any session does, by a single call or by another batch.
        after = await call(
            client, "sequentialthinking", {**thought(5, 5, more=False), "sessionId": "all-at-once"}
        )
    assert batch["sessionId"] == "all-at-once"
    assert {answer["sessionId"] for answer in batch["answers"]} == {"all-at-once"}
    assert [without_session(a) for a in batch["answers"]] == [without_session(a) for a in singles]
    assert after["thoughtHistoryLength"] == 5
    async with open_ledger(db, read_only=True) as ledger:
        events = await ledger.events("all-at-once")
    # One transaction: the batch's five events (start and four thoughts) share one time.
    assert len({event.recorded_at for event in events[:5]}) == 1
    assert [event.event_type for event in events[:5]] == [
        "session.started",
        "thought.recorded",
        "branch.opened",
        "thought.revised",
        "branch.extended",
    ]
    assert events[0].event.model_dump()["metadata"]["tool"] == BATCH


@pytest.mark.parametrize("transport", list(CLIENTS))
@pytest.mark.parametrize("mode", MODES)
async def test_an_unnamed_batch_continues_the_callers_own_session(
    tmp_path: Path, transport: str, mode: Mode
) -> None:
    async with CLIENTS[transport](sqlite_in(tmp_path), mode, "--tools", "all") as client:
        first = await call(client, BATCH, {"thoughts": [thought(1, 5), thought(2, 5)]})
        second = await call(client, BATCH, {"thoughts": [thought(3, 5), thought(4, 5)]})
        single = await call(client, "sequentialthinking", thought(5, 5, more=False))
    assert second["sessionId"] == first["sessionId"] == single["sessionId"]
    assert [a["thoughtHistoryLength"] for a in first["answers"] + second["answers"]] == [1, 2, 3, 4]
    assert single["thoughtHistoryLength"] == 5


@pytest.mark.parametrize("transport", list(CLIENTS))
@pytest.mark.parametrize("mode", MODES)
async def test_a_refused_thought_refuses_the_batch_naming_it_and_nothing_is_written(
    tmp_path: Path, transport: str, mode: Mode
) -> None:
    db = sqlite_in(tmp_path)
    async with CLIENTS[transport](db, mode, "--tools", "all") as client:
        await call(client, BATCH, {"thoughts": [thought(1)], "sessionId": "s"})
        written = await event_total(db)
        bad_type = await refused(
            client,
            BATCH,
            {"thoughts": [thought(2), {**thought(3), "thoughtNumber": 0}], "sessionId": "s"},
        )
        bad_rule = await refused(
            client,
            BATCH,
            {"thoughts": [thought(2), {**thought(3), "thought": ""}], "sessionId": "s"},
        )
        misplaced = await refused(
            client, BATCH, {"thoughts": [{**thought(2), "sessionId": "s"}], "sessionId": "s"}
        )
        empty = await refused(client, BATCH, {"thoughts": [], "sessionId": "s"})
        too_many = await refused(client, BATCH, {"thoughts": [thought(2)] * 1001, "sessionId": "s"})
        assert await event_total(db) == written
        read = await call(client, "thinking_history", {"sessionId": "s"})
    assert bad_type == (
        "Invalid sequential thinking params: thoughts.1.thoughtNumber: must be at least 1 (got 0)"
    )
    assert bad_rule == (
        "thoughts[1]: invalid thought: thought: must not be empty; "
        "nothing of the batch was recorded"
    )
    assert "thoughts.0.sessionId" in misplaced
    assert "thoughts: " in empty
    assert "at least 1 item" in empty
    assert "thoughts: " in too_many
    assert "at most 1000 items" in too_many
    assert read["thoughtHistoryLength"] == 1


@pytest.mark.parametrize("mode", MODES)
async def test_the_default_tools_do_not_list_the_batch(tmp_path: Path, mode: Mode) -> None:
    async with stdio_client(sqlite_in(tmp_path), mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool(BATCH, {"thoughts": [thought(1)]})
    assert names == ["sequentialthinking", "thinking_history"]
    assert result.is_error is True


@pytest.mark.parametrize("mode", MODES)
async def test_a_principal_batches_only_into_its_own_sessions(tmp_path: Path, mode: Mode) -> None:
    async with serving_with_auth(tmp_path, "--tools", "all") as server:
        alice, bob = server.mint("alice"), server.mint("bob")
        reader = server.mint("rita", role="reader")
        async with server.client(alice, mode=mode) as client:
            mine = await call(
                client, BATCH, {"thoughts": [thought(1), thought(2)], "sessionId": "s"}
            )
        async with server.client(bob, mode=mode) as client:
            # Alice's "s" is not Bob's to write: his batch goes to his own session of that name.
            his = await call(client, BATCH, {"thoughts": [thought(1)], "sessionId": "s"})
        async with server.client(reader, mode=mode) as client:
            written = await event_total(server.db)
            said = await refused(client, BATCH, {"thoughts": [thought(1)], "sessionId": "t"})
            assert await event_total(server.db) == written
        async with server.client(alice, mode=mode) as client:
            read = await call(client, "thinking_history", {"sessionId": "s"})
    # Each principal's "s" is a session of its own (see thoughtledger.adapters.mcp.tools.targets).
    assert his["sessionId"] != mine["sessionId"]
    assert [a["thoughtHistoryLength"] for a in his["answers"]] == [1]
    assert "reader role" in said
    assert read["thoughtHistoryLength"] == 2
