"""Two SQLite stores on one file: a head one remembers may have been moved by the other."""

import asyncio
from pathlib import Path

import pytest

from thoughtledger.ledger.errors import ConcurrencyError
from thoughtledger.ledger.events import ThoughtRecorded
from thoughtledger.ledger.store.sqlite import SqliteEventStore

pytestmark = pytest.mark.anyio


def _thought(n: int) -> ThoughtRecorded:
    return ThoughtRecorded(
        thought=f"t{n}", thought_number=n, total_thoughts=n, next_thought_needed=True
    )


async def test_a_batch_whose_remembered_head_moved_elsewhere_is_checked_one_by_one(
    tmp_path: Path,
) -> None:
    first = await SqliteEventStore.open(tmp_path / "shared.db")
    second = await SqliteEventStore.open(tmp_path / "shared.db")
    try:
        await first.append("s", [_thought(1)], expected_version=0)
        await first.append("t", [_thought(1)], expected_version=0)
        # The second store moves "s" on; the first still remembers it at version 1.
        await second.append("s", [_thought(2)], expected_version=1)
        stale, fresh, new = await asyncio.gather(
            first.append("s", [_thought(2)], expected_version=1),
            first.append("t", [_thought(2)], expected_version=1),
            first.append("u", [_thought(1)], expected_version=0),
            return_exceptions=True,
        )
        assert isinstance(stale, ConcurrencyError)
        assert isinstance(fresh, list)
        assert isinstance(new, list)
        assert [r.version for r in fresh] == [2]
        assert [r.version for r in new] == [1]
        assert [r.payload for r in await first.read_stream("s")] == [
            r.payload for r in await second.read_stream("s")
        ]
        # Having learnt the true head, the first store appends after the second's event.
        await first.append("s", [_thought(3)], expected_version=2)
        assert (await second.verify("s")).ok
    finally:
        await first.aclose()
        await second.aclose()
