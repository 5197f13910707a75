"""Reading from a hot standby beside the primary: live latency, and a read right after a write.

A private primary and a hot standby streaming its WAL are started (``initdb``, then
``pg_basebackup -R``: the test suite's :mod:`tests.support.pg_cluster`). A child process appends
stamped thoughts to the primary at a steady pace (as in ``tools/bench subscribe``); in this
process one subscription reads the primary (woken by LISTEN/NOTIFY), the other reads the standby
(woken by following ``pg_last_wal_replay_lsn()``). The ratio is the standby's median latency over
the primary's, both measured on the same events.

The second row times the read that follows each append through one ledger (``events`` of the
session just appended to): with a read URL it waits until the standby has replayed the append
(read-your-writes); the baseline is the same loop on a ledger without one, in the same run.

The last two rows (:mod:`bench_standby_load`) are the primary's append rate while readers hammer the
standby, over the same appends with no readers.

Usage: tools/bench standby
"""

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_standby_load import appends_under_reads
from bench_subscribe import _ms, _spawn

from tests.support import pg_cluster
from thoughtledger.api.bootstrap import open_ledger, open_store
from thoughtledger.ledger.store.postgres.replay import REPLAY_POLL

Result = dict[str, Any]


async def _latencies(
    url: str, read_url: str | None, count: int, ready: asyncio.Event
) -> list[float]:
    store = await open_store(url, read_only=True, read_url=read_url)
    latencies: list[float] = []
    try:
        stream = store.subscribe()
        ready.set()
        async for record in stream:
            latencies.append(time.monotonic() - float(record.event.thought))  # type: ignore[union-attr]
            if len(latencies) == count:
                break
    finally:
        await store.aclose()
    return latencies


async def _reads_after_writes(url: str, read_url: str | None, count: int) -> list[float]:
    took: list[float] = []
    async with open_ledger(url, read_url=read_url) as ledger:
        session_id = None
        for number in range(1, count + 1):
            thought = {
                "thought": f"thought {number}",
                "thought_number": number,
                "total_thoughts": count,
                "next_thought_needed": True,
            }
            session_id = (await ledger.think(session_id, thought)).session_id
            started = time.perf_counter()
            events = await ledger.events(session_id)
            took.append(time.perf_counter() - started)
            assert len(events) == number + 1  # the append is always read back
    return took


async def bench_standby(count: int = 150) -> list[Result]:
    """The standby-subscription row (none when no PostgreSQL server binaries are installed)."""
    try:
        pg_cluster.binaries()
    except pg_cluster.ClusterError as exc:
        print(f"standby: skipped ({exc})")
        return []
    pair = await asyncio.to_thread(pg_cluster.start_pair)
    try:
        url = pair.primary.url
        await (await open_store(url)).aclose()  # the ledger's tables, on the primary
        await asyncio.to_thread(pg_cluster.wait_replayed, pair)
        ready = [asyncio.Event(), asyncio.Event()]
        async with asyncio.timeout(120):
            on_primary = asyncio.create_task(_latencies(url, None, count, ready[0]))
            on_standby = asyncio.create_task(_latencies(url, pair.standby.url, count, ready[1]))
            await asyncio.gather(*(event.wait() for event in ready))
            child = _spawn("ledger", url, count)
            primary, standby = await asyncio.gather(on_primary, on_standby)
            await asyncio.to_thread(child.wait, 60)
        reads_primary = await _reads_after_writes(url, None, count)
        await asyncio.to_thread(pg_cluster.wait_replayed, pair)
        reads_standby = await _reads_after_writes(url, pair.standby.url, count)
        under_reads = await appends_under_reads(pair)
    finally:
        await asyncio.to_thread(pg_cluster.stop_pair, pair)
    return [
        {
            "name": f"subscription live latency, hot standby (replay followed every "
            f"{REPLAY_POLL * 1000:.0f} ms) vs the primary (NOTIFY), another process appending",
            "ratio": round(statistics.median(standby) / statistics.median(primary), 2),
            "lower_is_better": True,
            "median_ms": _ms(standby, 0.5),
            "p95_ms": _ms(standby, 0.95),
            "baseline_median_ms": _ms(primary, 0.5),
            "baseline_p95_ms": _ms(primary, 0.95),
            "events": len(standby),
            "baseline": "a subscription on the primary, same events, same run",
        },
        {
            "name": "a session read right after each append to it, through a ledger reading "
            "from a hot standby (read-your-writes) vs one reading the primary",
            "ratio": round(statistics.median(reads_standby) / statistics.median(reads_primary), 2),
            "lower_is_better": True,
            "median_ms": _ms(reads_standby, 0.5),
            "p95_ms": _ms(reads_standby, 0.95),
            "baseline_median_ms": _ms(reads_primary, 0.5),
            "baseline_p95_ms": _ms(reads_primary, 0.95),
            "events": len(reads_standby),
            "baseline": "the same appends and reads on a ledger without a read URL, same run",
        },
        *under_reads,
    ]
