"""Who may see what over ``serve --http --auth``: each principal its own sessions, an auditor all.

Real servers in child processes and the SDK's streamable-HTTP client with different bearer
tokens. Every attempt to list, read, append to or clear another principal's session must fail
exactly as it would for a session that does not exist, and write nothing where it was aimed.
"""

import uuid
from pathlib import Path

import anyio
import pytest
from mcp import Client, MCPError

from tests.support.auth import AuthServer, serving_with_auth
from tests.support.mcp import Json, agent_meta, call, refused, resource_text, thought
from tests.support.processes import WAIT
from thoughtledger.api.bootstrap import open_ledger

pytestmark = pytest.mark.anyio


async def history(db: str, session_id: str) -> list[str]:
    """The thoughts a session holds, read from the ledger itself (not through the server)."""
    async with open_ledger(db, read_only=True) as ledger:
        return [entry.thought for entry in (await ledger.state(session_id)).thoughts]


async def event_total(db: str) -> int:
    async with open_ledger(db, read_only=True) as ledger:
        return sum(head.version for head in await ledger.all_heads())


async def listed(client: Client) -> set[str]:
    return {
        s["sessionId"]
        for s in (await resource_text(client, "thoughtledger://sessions"))["sessions"]
    }


async def resource_error(client: Client, session_id: str) -> str:
    with pytest.raises(MCPError) as raised:
        await client.read_resource(f"thoughtledger://sessions/{session_id}")
    return raised.value.error.message


async def alice_session(server: AuthServer, token: str) -> str:
    async with server.client(token) as alice:
        first = await call(alice, "sequentialthinking", {**thought(1), "thought": "alice 1"})
        await call(alice, "sequentialthinking", {**thought(2), "thought": "alice 2"})
    session_id: str = first["sessionId"]
    return session_id


async def test_another_principals_session_answers_as_a_missing_one(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path) as server:
        alice, bob = server.mint("alice"), server.mint("bob")
        with anyio.fail_after(WAIT):
            mine = await alice_session(server, alice)
            missing = str(uuid.uuid4())
            async with server.client(bob) as client:
                await call(client, "sequentialthinking", {**thought(1), "thought": "bob 1"})
                seen = await listed(client)
                read_theirs = await refused(client, "thinking_history", {"sessionId": mine})
                read_missing = await refused(client, "thinking_history", {"sessionId": missing})
                as_of = await refused(
                    client, "thinking_history", {"sessionId": mine, "asOfVersion": 1}
                )
                resource_theirs = await resource_error(client, mine)
                resource_missing = await resource_error(client, missing)
    assert mine not in seen
    assert len(seen) == 1  # bob's own
    assert read_theirs == read_missing.replace(missing, mine)
    assert as_of == read_theirs
    assert resource_theirs == resource_missing.replace(missing, mine)


async def test_appending_to_or_clearing_another_principals_session_leaves_it_untouched(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path) as server:
        alice, bob = server.mint("alice"), server.mint("bob")
        with anyio.fail_after(WAIT):
            mine = await alice_session(server, alice)
            async with server.client(bob) as client:
                injected = await call(
                    client,
                    "sequentialthinking",
                    {**thought(3), "thought": "INJECTED by B", "sessionId": mine},
                )
                cleared = await call(
                    client,
                    "sequentialthinking",
                    {
                        **thought(1),
                        "thought": "bob clears",
                        "sessionId": mine,
                        "clearSession": True,
                    },
                )
                # Bob's name for it is his own session, consistently: he reads back what he wrote.
                own = await call(client, "thinking_history", {"sessionId": mine})
            async with server.client(alice) as client:
                later = await call(
                    client,
                    "sequentialthinking",
                    {**thought(3), "thought": "alice 3", "sessionId": mine},
                )
    assert injected["sessionId"] != mine
    assert cleared["sessionId"] != mine
    assert later["sessionId"] == mine  # not cleared: alice continues where she was
    assert await history(server.db, mine) == ["alice 1", "alice 2", "alice 3"]
    assert "INJECTED by B" in [t["thought"] for t in own["history"]]


async def test_names_are_each_principals_own(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path, "--tools", "all") as server:
        alice, bob = server.mint("alice"), server.mint("bob")
        answers: dict[str, Json] = {}
        with anyio.fail_after(WAIT):
            for name, token in (("alice", alice), ("bob", bob)):
                # 2026-07-28 clients have no connection: "default" is a name, as in the MCP API
                # reference, and "task" a name of the caller's choosing.
                async with server.client(token, mode="auto") as client:
                    for session in ("default", "task"):
                        answers[f"{name}/{session}"] = await call(
                            client,
                            "sequential_thinking",
                            {
                                "thought": f"{name} in {session}",
                                "thought_number": 1,
                                "total_thoughts": 2,
                                "next_thought_needed": True,
                                "session_id": session,
                            },
                        )
                        answers[f"{name}/{session}/again"] = await call(
                            client,
                            "sequential_thinking",
                            {
                                "thought": f"{name} again",
                                "thought_number": 2,
                                "total_thoughts": 2,
                                "next_thought_needed": False,
                                "session_id": session,
                            },
                        )
    ids = {key: answer.get("session_id") for key, answer in answers.items()}
    assert answers["alice/default/again"]["thought_history_length"] == 2
    assert answers["bob/default/again"]["thought_history_length"] == 2
    assert ids["alice/task"] == ids["alice/task/again"]
    assert ids["bob/task"] == ids["bob/task/again"]
    assert ids["alice/task"] != ids["bob/task"]
    assert await history(server.db, str(ids["alice/task"])) == ["alice in task", "alice again"]


async def test_an_auditor_reads_every_session_and_writes_none(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path) as server:
        alice, bob = server.mint("alice"), server.mint("bob")
        auditor = server.mint("carol", "auditor")
        with anyio.fail_after(WAIT):
            hers = await alice_session(server, alice)
            his = await alice_session(server, bob)
            before = await event_total(server.db)
            async with server.client(auditor) as client:
                seen = await listed(client)
                read = await call(client, "thinking_history", {"sessionId": hers})
                document = await resource_text(client, f"thoughtledger://sessions/{his}")
                write = await refused(client, "sequentialthinking", thought(1))
                clear = await refused(
                    client,
                    "sequentialthinking",
                    {**thought(3), "sessionId": hers, "clearSession": True},
                )
    assert {hers, his} <= seen
    assert [t["thought"] for t in read["history"]] == ["alice 1", "alice 2"]
    assert len(document["thoughts"]) == 2
    assert "auditor role" in write
    assert clear == write
    assert await event_total(server.db) == before


async def test_a_reader_reads_its_own_sessions_and_writes_none(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path) as server:
        writer, reader = server.mint("alice"), server.mint("alice", "reader")
        other = server.mint("bob")
        with anyio.fail_after(WAIT):
            hers = await alice_session(server, writer)
            his = await alice_session(server, other)
            before = await event_total(server.db)
            async with server.client(reader) as client:
                seen = await listed(client)
                read = await call(client, "thinking_history", {"sessionId": hers})
                not_his = await refused(client, "thinking_history", {"sessionId": his})
                write = await refused(
                    client, "sequentialthinking", {**thought(3), "sessionId": hers}
                )
    assert seen == {hers}
    assert len(read["history"]) == 2
    assert not_his.startswith("no session")
    assert "reader role" in write
    assert await event_total(server.db) == before


async def test_with_auth_the_principal_is_the_agent_whatever_the_call_claims(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path, "--agent", "server-default") as server:
        alice = server.mint("alice")
        with anyio.fail_after(WAIT):
            async with server.client(alice, mode="auto") as client:
                result = await client.call_tool(
                    "sequentialthinking", thought(1), meta=agent_meta("bob")
                )
                assert result.is_error is False
                assert result.structured_content is not None
                session_id = result.structured_content["sessionId"]
    async with open_ledger(server.db, read_only=True) as ledger:
        state = await ledger.state(session_id)
        figures = await ledger.stats.summarize(agent="alice")
    assert (state.owner, state.metadata.get("agent")) == ("alice", "alice")
    assert figures.overall.sessions == 1
