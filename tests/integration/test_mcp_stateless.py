"""Calls without ``sessionId`` in both protocol eras, with the SDK's own client, as users run it.

A 2026-07-28 client (``mcp.Client(url)``'s default) sends no ``initialize`` and no
``Mcp-Session-Id``: over HTTP nothing identifies it, so an unnamed call continues its caller's
current run (per principal with ``--auth``), a plain thought 1 starts the next run, and a thought
that fits none or several of the caller's recent runs is refused with nothing written. stdio has
the process as its identity in either era. Every server here is a real ``thoughtledger serve``
child process; the HTTP ones listen on loopback.
"""

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.auth import serving_with_auth
from tests.support.mcp import Json, Mode, call, refused, thought
from tests.support.processes import ROOT, WAIT, child_env, serve_command, serving_http, sqlite_in
from thoughtledger.api.bootstrap import open_ledger

pytestmark = pytest.mark.anyio

MODES: list[Mode] = ["auto", "legacy"]


async def event_total(db: str) -> int:
    """Every event the ledger holds, read from the ledger itself (not through the server)."""
    async with open_ledger(db, read_only=True) as ledger:
        return sum(head.version for head in await ledger.all_heads())


@asynccontextmanager
async def stdio_client(db: str, mode: Mode) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=serve_command(db)[1:],
        cwd=ROOT,
        env=child_env(DISABLE_THOUGHT_LOGGING="true"),
    )
    async with Client(server, mode=mode) as client:
        yield client


async def a_run(client: Client, numbers: range) -> list[Json]:
    return [
        await call(client, "sequentialthinking", thought(n, total=len(numbers))) for n in numbers
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_unnamed_calls_continue_the_run_over_stdio(tmp_path: Path, mode: Mode) -> None:
    async with stdio_client(sqlite_in(tmp_path), mode) as client:
        with anyio.fail_after(WAIT):
            first = await a_run(client, range(1, 4))
            read = await call(client, "thinking_history", {})
            second = await a_run(client, range(1, 3))
    assert {answer["sessionId"] for answer in first} == {first[0]["sessionId"]}
    assert [answer["thoughtHistoryLength"] for answer in first] == [1, 2, 3]
    assert read["sessionId"] == first[0]["sessionId"]
    assert {answer["sessionId"] for answer in second} == {second[0]["sessionId"]}
    assert second[0]["sessionId"] != first[0]["sessionId"]  # a plain thought 1: the next run


@pytest.mark.parametrize("mode", MODES)
async def test_unnamed_calls_continue_the_run_over_http(tmp_path: Path, mode: Mode) -> None:
    async with serving_http(sqlite_in(tmp_path)) as url, Client(url, mode=mode) as client:
        with anyio.fail_after(WAIT):
            first = await a_run(client, range(1, 4))
            read = await call(client, "thinking_history", {})
            second = await a_run(client, range(1, 3))
    assert {answer["sessionId"] for answer in first} == {first[0]["sessionId"]}
    assert [answer["thoughtHistoryLength"] for answer in first] == [1, 2, 3]
    assert [t["thought"] for t in read["history"]] == ["thought 1", "thought 2", "thought 3"]
    assert {answer["sessionId"] for answer in second} == {second[0]["sessionId"]}
    assert second[0]["sessionId"] != first[0]["sessionId"]


async def test_revisions_and_branches_continue_the_run_without_a_connection(
    tmp_path: Path,
) -> None:
    async with serving_http(sqlite_in(tmp_path)) as url, Client(url) as client:
        with anyio.fail_after(WAIT):
            run = await a_run(client, range(1, 4))
            revision = await call(
                client, "sequentialthinking", thought(2, isRevision=True, revisesThought=2)
            )
            branch = await call(
                client,
                "sequentialthinking",
                thought(3, branchFromThought=1, branchId="alt"),
            )
            extended = await call(client, "sequentialthinking", thought(3, branchId="alt"))
    assert {revision["sessionId"], branch["sessionId"], extended["sessionId"]} == {
        run[0]["sessionId"]
    }
    assert extended["thoughtHistoryLength"] == 6
    assert branch["branches"] == ["alt"]


async def test_a_thought_that_follows_no_run_is_refused_naming_the_current_one(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    async with serving_http(db) as url, Client(url) as client:
        with anyio.fail_after(WAIT):
            run = await a_run(client, range(1, 3))
            before = await event_total(db)
            said = await refused(client, "sequentialthinking", thought(5))
            after = await event_total(db)
            named = await call(
                client, "sequentialthinking", thought(5, sessionId=run[0]["sessionId"])
            )
    assert after == before  # nothing written
    assert run[0]["sessionId"] in said
    assert "pass sessionId" in said
    assert "\x1b" not in said
    assert named["sessionId"] == run[0]["sessionId"]
    assert named["thoughtHistoryLength"] == 3


async def test_two_agents_in_step_under_one_caller_are_refused_not_mixed(tmp_path: Path) -> None:
    # Without --auth every unnamed caller is one: agents a and b both start a run, and then
    # thought 2 could belong to either.
    db = sqlite_in(tmp_path)
    async with serving_http(db) as url, Client(url) as a, Client(url) as b:
        with anyio.fail_after(WAIT):
            a1 = await call(a, "sequentialthinking", thought(1, thought="a 1"))
            b1 = await call(b, "sequentialthinking", thought(1, thought="b 1"))
            before = await event_total(db)
            ambiguous = await refused(a, "sequentialthinking", thought(2, thought="a 2"))
            after = await event_total(db)
            a2 = await call(
                a, "sequentialthinking", thought(2, thought="a 2", sessionId=a1["sessionId"])
            )
            # Now only b's run waits for a thought 2: b's unnamed thought joins its own run.
            b2 = await call(b, "sequentialthinking", thought(2, thought="b 2"))
            read_a = await call(a, "thinking_history", {"sessionId": a1["sessionId"]})
            read_b = await call(b, "thinking_history", {"sessionId": b1["sessionId"]})
    assert a1["sessionId"] != b1["sessionId"]
    assert after == before
    assert a1["sessionId"] in ambiguous
    assert b1["sessionId"] in ambiguous
    assert "pass sessionId" in ambiguous
    assert (a2["sessionId"], b2["sessionId"]) == (a1["sessionId"], b1["sessionId"])
    assert [t["thought"] for t in read_a["history"]] == ["a 1", "a 2"]
    assert [t["thought"] for t in read_b["history"]] == ["b 1", "b 2"]


@pytest.mark.parametrize("mode", MODES)
async def test_two_principals_at_once_each_keep_their_own_run(tmp_path: Path, mode: Mode) -> None:
    async with serving_with_auth(tmp_path) as server:
        tokens = {"alice": server.mint("alice"), "bob": server.mint("bob")}
        answers: dict[str, list[Json]] = {"alice": [], "bob": []}
        turn = {"alice": anyio.Event(), "bob": anyio.Event()}

        async def agent(name: str, other: str) -> None:
            async with server.client(tokens[name], mode=mode) as client:
                for n in (1, 2, 3):
                    if name == "bob" or n > 1:
                        await turn[name].wait()  # strictly interleaved: alice, bob, alice...
                    turn[name] = anyio.Event()
                    answers[name].append(
                        await call(client, "sequentialthinking", thought(n, thought=f"{name} {n}"))
                    )
                    turn[other].set()
                read = await call(client, "thinking_history", {})
            assert [t["thought"] for t in read["history"]] == [f"{name} {n}" for n in (1, 2, 3)]

        with anyio.fail_after(WAIT * 2):
            async with anyio.create_task_group() as group:
                group.start_soon(agent, "alice", "bob")
                group.start_soon(agent, "bob", "alice")
    for name in ("alice", "bob"):
        assert len({answer["sessionId"] for answer in answers[name]}) == 1
        assert [answer["thoughtHistoryLength"] for answer in answers[name]] == [1, 2, 3]
    assert answers["alice"][0]["sessionId"] != answers["bob"][0]["sessionId"]


async def test_under_continuous_runs_a_thought_1_joins_the_current_run(tmp_path: Path) -> None:
    async with (
        serving_http(sqlite_in(tmp_path), "--runs", "continuous") as url,
        Client(url) as client,
    ):
        with anyio.fail_after(WAIT):
            first = await a_run(client, range(1, 3))
            again = await call(client, "sequentialthinking", thought(1))
    assert again["sessionId"] == first[0]["sessionId"]
    assert again["thoughtHistoryLength"] == 3


async def test_clearing_without_a_connection_retires_the_current_run(tmp_path: Path) -> None:
    async with serving_http(sqlite_in(tmp_path)) as url, Client(url) as client:
        with anyio.fail_after(WAIT):
            first = await a_run(client, range(1, 3))
            cleared = await call(client, "sequentialthinking", thought(3, clearSession=True))
            after = await call(client, "sequentialthinking", thought(4))
            old = await call(client, "thinking_history", {"sessionId": first[0]["sessionId"]})
    assert cleared["sessionId"] != first[0]["sessionId"]
    assert (after["sessionId"], after["thoughtHistoryLength"]) == (cleared["sessionId"], 2)
    assert old["status"] == "cleared"


async def test_after_a_restart_an_unnamed_thought_asks_for_its_session(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    async with serving_http(db) as url, Client(url) as client:
        with anyio.fail_after(WAIT):
            run = await a_run(client, range(1, 3))
    async with serving_http(db) as url, Client(url) as client:
        with anyio.fail_after(WAIT):
            before = await event_total(db)
            said = await refused(client, "sequentialthinking", thought(3))
            after = await event_total(db)
            named = await call(
                client, "sequentialthinking", thought(3, sessionId=run[0]["sessionId"])
            )
            unnamed = await call(client, "sequentialthinking", thought(4))
    assert after == before
    assert "pass sessionId" in said
    assert named["thoughtHistoryLength"] == 3
    # The session last named is the caller's current run: the model may omit sessionId again.
    assert (unnamed["sessionId"], unnamed["thoughtHistoryLength"]) == (run[0]["sessionId"], 4)
