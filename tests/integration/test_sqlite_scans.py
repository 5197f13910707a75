"""SQLite's scans (statistics, search, loop counts) run in worker threads on connections of their
own, and a cancelled one stops instead of reading on for no one."""

import asyncio
from pathlib import Path

import pytest

from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.events import ThoughtRecorded
from thoughtledger.ledger.store.sqlite import SqliteEventStore
from thoughtledger.ledger.store.sqlite.scans import SqliteScans

pytestmark = pytest.mark.anyio

LONG = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) "
    "SELECT max(i) FROM n"
)
"""A statement that reads on for a minute or so (bounded: a scan that is not stopped ends)."""


async def test_a_cancelled_scan_stops_and_its_connection_answers_the_next(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    store = await SqliteEventStore.open(path)
    await store.append(
        "s",
        [
            ThoughtRecorded(
                thought="t", thought_number=1, total_thoughts=1, next_thought_needed=False
            )
        ],
        expected_version=0,
    )
    scans = SqliteScans(path.resolve().as_uri(), path)
    try:
        scan = asyncio.ensure_future(scans.fetch(LONG, {}))
        await asyncio.sleep(0)  # one turn of the loop: the scan's thread is started
        scan.cancel()
        with pytest.raises(asyncio.CancelledError):
            await scan
        counted = "SELECT count(*) FROM tl_events WHERE session_id = :s"
        assert await scans.fetch(counted, {"s": "s"}) == [(1,)]
    finally:
        scans.close()
        await store.aclose()
    # The long scan's thread ended: waiting for every worker thread to end comes back at once.
    await asyncio.wait_for(asyncio.get_running_loop().shutdown_default_executor(), timeout=10)


async def test_a_scan_of_a_closed_store_is_refused(tmp_path: Path) -> None:
    store = await SqliteEventStore.open(tmp_path / "ledger.db")
    await store.aclose()
    with pytest.raises(StoreError, match="closed"):
        await store.stats.stats_rows()
