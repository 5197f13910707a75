"""Full durability on SQLite: commits wait for fsync on the loop, or on a thread on a slow disk."""

import asyncio
from pathlib import Path

import pytest

import thoughtledger.ledger.store.sqlite.commit_place
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.errors import ConcurrencyError
from thoughtledger.ledger.events import ThoughtRecorded
from thoughtledger.ledger.store.sqlite import SqliteEventStore

pytestmark = pytest.mark.anyio


def _thought(n: int) -> ThoughtRecorded:
    return ThoughtRecorded(
        thought=f"t{n}", thought_number=n, total_thoughts=n, next_thought_needed=True
    )


async def _agents(store: SqliteEventStore, agents: int = 8, thoughts: int = 25) -> None:
    async def agent(n: int) -> None:
        for version in range(thoughts):
            await store.append(f"a{n}", [_thought(version + 1)], expected_version=version)

    await asyncio.gather(*(agent(n) for n in range(agents)))


@pytest.mark.parametrize("slow_disk", [False, True], ids=["fast-disk", "slow-disk"])
async def test_full_durability_keeps_every_guarantee_on_the_loop_and_on_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow_disk: bool
) -> None:
    # Which path runs is chosen by the test, not by how busy the machine's disk is today: every
    # commit counts as slow (the first few move the rest to a thread), or none does.
    threshold = -1.0 if slow_disk else float("inf")
    monkeypatch.setattr(
        thoughtledger.ledger.store.sqlite.commit_place, "SLOW_COMMIT_SECONDS", threshold
    )
    store = await SqliteEventStore.open(tmp_path / "full.db", durability="full")
    try:
        await _agents(store)
        assert store._commit_place.in_thread is slow_disk
        with pytest.raises(ConcurrencyError):
            await store.append("a0", [_thought(1)], expected_version=3)
        assert (await store.stream_head("a0")) is not None
        for n in range(8):
            versions = [r.version for r in await store.read_stream(f"a{n}")]
            assert versions == list(range(1, 26))
            assert (await store.verify(f"a{n}")).ok
    finally:
        await store.aclose()
    reopened = Ledger(await SqliteEventStore.open(tmp_path / "full.db"))
    try:
        assert len(await reopened.list_sessions()) == 8
    finally:
        await reopened.aclose()
