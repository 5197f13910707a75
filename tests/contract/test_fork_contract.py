"""Forking a session at any version, on every backend.

A fork's first event names its source, the version and the source's hash there; its state is the
source's as of that version, read from the source (nothing is copied), then its own thoughts.
The source is untouched, lists its forks, and ``verify`` fails a fork its source no longer backs.
"""

import pytest
from mcp import Client

from tests.support.backends import Backend, settled
from tests.support.mcp import call, think, thought
from tests.support.views import view_rows
from thoughtledger.adapters.mcp import create_server
from thoughtledger.adapters.tool import sequential_thinking_tool
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError
from thoughtledger.ledger.events import SessionStarted
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio


async def _source(ledger: Ledger, thoughts: int = 4) -> str:
    """A session of ``thoughts`` thoughts (its start is version 1, thought n is version n+1)."""
    session = await ledger.new_session(metadata={"agent": "planner"})
    for n in range(1, thoughts + 1):
        await session.think(
            thought=f"source {n}", thought_number=n, total_thoughts=6, next_thought_needed=True
        )
    return session.id


def _texts(thoughts: object) -> list[str]:
    assert isinstance(thoughts, tuple)
    return [entry.thought for entry in thoughts]


async def test_a_fork_starts_from_the_source_as_of_the_version_and_copies_nothing(
    store: LedgerStore,
) -> None:
    async with Ledger(store) as ledger:
        source = await _source(ledger)
        head = await store.stream_head(source)
        assert head is not None
        at = await store.read_stream(source, after_version=2, to_version=3)

        fork = await ledger.fork(source, at_version=3)

        (first,) = await store.read_stream(fork.id)  # one event: nothing was copied
        assert isinstance(first.event, SessionStarted)
        assert (first.event.fork_of, first.event.fork_version) == (source, 3)
        assert first.event.fork_hash == at[0].hash
        state = await ledger.state(fork.id)
        assert _texts(state.thoughts) == ["source 1", "source 2"]
        assert {entry.source for entry in state.thoughts} == {source}
        assert state.fork is not None
        assert state.fork.session_id == source
        assert state.version == 1
        assert await store.stream_head(source) == head  # the source is untouched


async def test_a_fork_continues_like_any_session_and_the_source_lists_it(
    store: LedgerStore,
) -> None:
    async with Ledger(store) as ledger:
        source = await _source(ledger)
        fork = await ledger.fork(source, at_version=3)
        outcome = await fork.think(
            thought="other way", thought_number=3, total_thoughts=6, next_thought_needed=True
        )
        assert outcome.session_id == fork.id
        state = await ledger.state(fork.id)
        assert _texts(state.thoughts) == ["source 1", "source 2", "other way"]
        assert state.thought_count == 3
        assert _texts((await ledger.state(source)).thoughts)[2:] == ["source 3", "source 4"]
        assert [head.session_id for head in await ledger.forks(source)] == [fork.id]
        assert await ledger.forks(fork.id) == []
        # Read afresh (no memory of either session), the fork reads the same.
        fresh = Ledger(store)
        assert _texts((await fresh.state(fork.id)).thoughts) == _texts(state.thoughts)
        await settled(store, 7)  # the source's 5 events and the fork's 2
        assert _texts((await fresh.rebuild())[fork.id].thoughts) == _texts(state.thoughts)
        # As of its first event, a fork is its source's thoughts up to the fork point.
        assert _texts((await ledger.state(fork.id, as_of_version=1)).thoughts) == [
            "source 1",
            "source 2",
        ]


async def test_a_fork_of_a_fork_reads_through_both(store: LedgerStore) -> None:
    async with Ledger(store) as ledger:
        source = await _source(ledger)
        first = await ledger.fork(source, at_version=2)
        await first.think(
            thought="first fork", thought_number=2, total_thoughts=6, next_thought_needed=True
        )
        second = await ledger.fork(first.id)
        await second.think(
            thought="second fork", thought_number=3, total_thoughts=6, next_thought_needed=False
        )
        expected = ["source 1", "first fork", "second fork"]
        assert _texts((await ledger.state(second.id)).thoughts) == expected
        await settled(store, 9)
        assert _texts((await Ledger(store).rebuild())[second.id].thoughts) == expected
        assert (await ledger.verify(second.id)).ok


async def test_verify_fails_a_fork_whose_named_source_hash_does_not_match(
    store: LedgerStore,
) -> None:
    async with Ledger(store) as ledger:
        source = await _source(ledger)
        honest = await ledger.fork(source, at_version=2)
        assert (await ledger.verify(honest.id)).ok
        forged = SessionStarted(fork_of=source, fork_version=2, fork_hash="0" * 64)
        await store.append("forged-fork", [forged], expected_version=0)
        report = await ledger.verify("forged-fork")
        assert not report.ok
        assert report.first_bad_version == 1
        assert report.reason is not None
        assert source in report.reason


async def test_a_bad_fork_is_refused_and_writes_nothing(store: LedgerStore) -> None:
    async with Ledger(store) as ledger:
        source = await _source(ledger, thoughts=2)
        before = len(await store.read_all())
        with pytest.raises(InvalidInputError, match="cannot be forked at version 4"):
            await ledger.fork(source, at_version=4)
        with pytest.raises(InvalidInputError, match="whole number"):
            await ledger.fork(source, at_version=0)
        with pytest.raises(SessionNotFoundError):
            await ledger.fork("no-such-session")
        with pytest.raises(SessionNotFoundError):  # a principal forks only what it may read
            await ledger.fork(source, owner="mallory")
        assert len(await store.read_all()) == before


async def test_a_fork_is_continued_over_mcp_by_its_session_id(backend: Backend) -> None:
    async with Ledger(await backend.open()) as ledger:
        source = await _source(ledger, thoughts=3)
        fork = await ledger.fork(source, at_version=2)
        async with Client(create_server(ledger), mode="auto") as client:
            answer = await think(client, {**thought(2, total=3), "sessionId": fork.id})
            history = await call(client, "thinking_history", {"sessionId": fork.id})
            listed = await call(client, "thinking_history", {"sessionId": source, "show": "view"})
        assert answer["sessionId"] == fork.id
        assert answer["thoughtHistoryLength"] == 2
        at = await ledger.events(source, as_of_version=2)
        assert history["forkOf"] == {"sessionId": source, "version": 2, "hash": at[-1].hash}
        assert [item["thought"] for item in history["history"]] == ["thought 2"]
        assert listed["forks"] == [fork.id]
        assert "forkOf" not in listed
        state = await ledger.state(fork.id)
        assert _texts(state.thoughts) == ["source 1", "thought 2"]


async def test_the_session_view_names_a_forks_source_and_version(backend: Backend) -> None:
    if backend.name == "memory":
        pytest.skip("the analytics views are SQL views")
    async with Ledger(await backend.open()) as ledger:
        source = await _source(ledger, thoughts=3)
        fork = await ledger.fork(source, at_version=3)
        await fork.think(
            thought="own", thought_number=3, total_thoughts=3, next_thought_needed=False
        )
        rows = {
            row["session_id"]: row
            for row in await view_rows(backend, "tl_session_stats", "session_id")
        }
    assert (rows[fork.id]["fork_of"], rows[fork.id]["fork_version"]) == (source, 3)
    assert rows[fork.id]["thoughts"] == 1  # a fork's counts are its own events'
    assert (rows[source]["fork_of"], rows[source]["fork_version"]) == (None, None)


async def test_the_in_process_tool_bound_to_a_fork_continues_it(store: LedgerStore) -> None:
    async with Ledger(store) as ledger:
        source = await _source(ledger, thoughts=3)
        fork = await ledger.fork(source, at_version=2)
        tool = sequential_thinking_tool(ledger, fork.id)
        answer = await tool.execute(thought(2, total=3, more=False))
        assert answer["sessionId"] == fork.id
        assert answer["thoughtHistoryLength"] == 2
        state = await ledger.state(fork.id)
        assert _texts(state.thoughts) == ["source 1", "thought 2"]
        assert _texts((await ledger.state(source)).thoughts) == [f"source {n}" for n in (1, 2, 3)]


async def test_redactions_follow_the_session_that_recorded_the_thought(store: LedgerStore) -> None:
    async with Ledger(store) as ledger:
        source = await _source(ledger, thoughts=3)
        fork = await ledger.fork(source, at_version=3)
        await fork.think(
            thought="fork's own", thought_number=3, total_thoughts=3, next_thought_needed=False
        )
        assert _texts((await ledger.state(fork.id)).thoughts)[0] == "source 1"
        # The fork's own thought at version 2 is redacted, not the source's thought at its v2.
        await ledger.redaction.redact(fork.id, version=2, reason="test", by="auditor")
        assert _texts((await ledger.state(fork.id)).thoughts) == [
            "source 1",
            "source 2",
            "[redacted]",
        ]
        # A redaction in the source reaches the fork, which reads the source's thoughts.
        await ledger.redaction.redact(source, version=2, reason="test", by="auditor")
        assert _texts((await ledger.state(fork.id)).thoughts)[0] == "[redacted]"
        assert (await ledger.verify(fork.id)).ok
