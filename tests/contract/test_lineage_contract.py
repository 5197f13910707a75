"""A session's lineage on every backend: the forks a principal may read, and comparisons.

One rule for every way in: the ledger's own user and an auditor see every fork; a reader or
writer the forks it owns. A comparison sets a fork beside its source from the fork point on,
and leaves the source's side empty for a caller who may not read it.
"""

import pytest

from thoughtledger.api import ForkEntry, Principal
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError
from thoughtledger.ledger.events import SessionStarted
from thoughtledger.ledger.ids import new_session_id
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio

ALICE = Principal("alice", "reader")
BOB = Principal("bob", "writer")
AUDITOR = Principal("carol", "auditor")


def _thought(text: str, number: int) -> dict[str, object]:
    return {
        "thought": text,
        "thought_number": number,
        "total_thoughts": 6,
        "next_thought_needed": True,
    }


async def _record(ledger: Ledger, session_id: str | None, owner: str | None, *texts: str) -> str:
    """Record ``texts`` as thoughts 1, 2... (continuing ``session_id``'s numbering if given)."""
    start = 0 if session_id is None else (await ledger.state(session_id)).thought_count
    for number, text in enumerate(texts, start=start + 1):
        session_id = (
            await ledger.think(session_id, _thought(text, number), owner=owner)
        ).session_id
    assert session_id is not None
    return session_id


async def _forged_fork(store: LedgerStore, owner: str, source: str, version: int) -> str:
    """A fork whose first event another ledger wrote (as an import brings one): any owner."""
    (at,) = await store.read_stream(source, after_version=version - 1, to_version=version)
    fork_id = new_session_id()
    started = SessionStarted(owner=owner, fork_of=source, fork_version=version, fork_hash=at.hash)
    await store.append(fork_id, [started], expected_version=0)
    return fork_id


async def test_each_caller_sees_the_forks_it_may_read(store: LedgerStore) -> None:
    async with Ledger(store, ttl=None) as ledger:
        source = await _record(ledger, None, "alice", "one", "two", "three")
        alices = (await ledger.fork(source, at_version=3, owner="alice")).id
        owners = (await ledger.fork(source, at_version=2, metadata={"agent": "cli"})).id
        bobs = await _forged_fork(store, "bob", source, 3)

        def ids(found: list[ForkEntry]) -> list[str]:
            return [entry.session_id for entry in found]

        everyone = [alices, owners, bobs]
        assert ids(await ledger.lineage.forks(source)) == everyone
        assert ids(await ledger.lineage.forks(source, principal=AUDITOR)) == everyone
        assert ids(await ledger.lineage.forks(source, principal=ALICE)) == [alices]
        assert ids(await ledger.lineage.forks(source, principal=BOB)) == [bobs]
        assert ids(await ledger.lineage.forks(source, limit=2)) == everyone[:2]
        entry = (await ledger.lineage.forks(source))[1]
        assert (entry.version, entry.agent, entry.owner) == (2, "cli", None)
        assert [head.session_id for head in await ledger.forks(source)] == everyone
        with pytest.raises(InvalidInputError):
            await ledger.lineage.forks(source, limit=0)


async def test_compare_sets_a_fork_beside_its_source_from_the_fork_point(
    store: LedgerStore,
) -> None:
    async with Ledger(store, ttl=None) as ledger:
        source = await _record(ledger, None, "alice", "one", "two")
        fork = (await ledger.fork(source, at_version=3, owner="alice")).id
        await _record(ledger, source, "alice", "source three", "source four")
        await _record(ledger, fork, "alice", "fork three")

        found = await ledger.lineage.compare(fork, principal=ALICE)

        assert (found.point.session_id, found.point.version, found.common) == (source, 3, 2)
        assert [entry.thought for entry in found.source_thoughts] == [
            "source three",
            "source four",
        ]
        assert found.source_total == 2
        assert found.source_readable
        assert [entry.thought for entry in found.fork_thoughts] == ["fork three"]
        assert found.fork_total == 1
        cut = await ledger.lineage.compare(fork, limit=1)
        assert [entry.thought for entry in cut.source_thoughts] == ["source three"]
        assert cut.source_total == 2
        with pytest.raises(SessionNotFoundError):
            await ledger.lineage.compare(fork, principal=BOB)
        with pytest.raises(InvalidInputError, match="is no fork"):
            await ledger.lineage.compare(source)
        with pytest.raises(InvalidInputError, match="limit"):
            await ledger.lineage.compare(fork, limit=0)


async def test_a_fork_of_a_fork_shares_everything_before_its_own_point(
    store: LedgerStore,
) -> None:
    async with Ledger(store, ttl=None) as ledger:
        source = await _record(ledger, None, None, "one", "two", "three")
        first = (await ledger.fork(source, at_version=3)).id
        await _record(ledger, first, None, "first's own", "first's next")
        second = (await ledger.fork(first, at_version=2)).id  # after "first's own"
        await _record(ledger, second, None, "second's own")

        found = await ledger.lineage.compare(second)

        assert found.common == 3  # two from the source, one from the first fork
        assert [entry.thought for entry in found.source_thoughts] == ["first's next"]
        assert [entry.thought for entry in found.fork_thoughts] == ["second's own"]


async def test_compare_says_when_the_source_cannot_be_read(store: LedgerStore) -> None:
    async with Ledger(store, ttl=None) as ledger:
        source = await _record(ledger, None, "alice", "one", "two")
        await _record(ledger, source, "alice", "alice's secret")
        bobs = await _forged_fork(store, "bob", source, 3)
        await _record(ledger, bobs, "bob", "bob's way")

        found = await ledger.lineage.compare(bobs, principal=BOB)

        assert not found.source_readable
        assert (found.source_thoughts, found.source_total) == ((), None)
        assert [entry.thought for entry in found.fork_thoughts] == ["bob's way"]
        assert found.common == 2
        assert (await ledger.lineage.compare(bobs, principal=AUDITOR)).source_total == 1


async def test_compare_refuses_a_side_longer_than_it_reads_whole(
    store: LedgerStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thoughtledger.api.lineage

    async with Ledger(store, ttl=None) as ledger:
        source = await _record(ledger, None, None, "one", "two")
        fork = (await ledger.fork(source, at_version=2)).id
        await _record(ledger, fork, None, "fork two")
        monkeypatch.setattr(thoughtledger.api.lineage, "COMPARE_EVENTS_MAX", 2)
        with pytest.raises(InvalidInputError, match=f"show {source} --limit 100"):
            await ledger.lineage.compare(fork)  # the fork has 2 events, the source 3
        monkeypatch.setattr(thoughtledger.api.lineage, "COMPARE_EVENTS_MAX", 3)
        assert (await ledger.lineage.compare(fork)).fork_total == 1
