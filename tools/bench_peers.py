"""Peers measured in the same run: the eventsourcing library's SQLite recorder, and (when node and
the official package are present) the official sequential-thinking server over stdio.

Usage: tools/bench peers   (or: .venv/bin/python tools/bench_peers.py)

``tools/bench`` installs the official server, ``@modelcontextprotocol/server-sequential-thinking``
2026.8.31, and names its ``dist/index.js`` in ``THOUGHTLEDGER_OFFICIAL_SERVER``; set that yourself
to measure another copy. Rows:

* one writer appending one event a call, against the recorder (its default, synchronous=FULL): at
  our durability=full, a figure without a target (both sync once a commit; ours writes more pages
  and spends more Python an append: see docs/benchmarks.md), and at our default durability=normal,
  target >= 1.0;
* 16 concurrent writers at durability=full against the recorder from 16 threads, target >= 1.0;
* the stdio round trip p50 against the official server (in memory), a figure.
"""

import asyncio
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from thoughtledger.ledger.events import ThoughtRecorded
from thoughtledger.ledger.store.sqlite import Durability, SqliteEventStore

Result = dict[str, Any]


def _events(count: int) -> list[ThoughtRecorded]:
    return [
        ThoughtRecorded(
            thought=f"Thought {n}: weigh the options and note what changed since the last step.",
            thought_number=n,
            total_thoughts=count,
            next_thought_needed=True,
        )
        for n in range(1, count + 1)
    ]


def _stored(originator: uuid.UUID, events: list[ThoughtRecorded]) -> list[Any]:
    """The payloads as eventsourcing's stored events of one aggregate, versions from 1."""
    from eventsourcing.persistence import StoredEvent

    return [
        StoredEvent(
            originator_id=originator,
            originator_version=n,
            topic="thoughtledger:ThoughtRecorded",
            state=event.model_dump_json().encode(),
        )
        for n, event in enumerate(events, start=1)
    ]


def _eventsourcing(path: Path, events: list[ThoughtRecorded]) -> tuple[float, str]:
    """Append the same payloads one per call through eventsourcing's SQLite recorder."""
    from eventsourcing.sqlite import SQLiteAggregateRecorder, SQLiteDatastore

    datastore = SQLiteDatastore(str(path))
    recorder = SQLiteAggregateRecorder(datastore)
    recorder.create_table()
    stored = _stored(uuid.uuid4(), events)
    start = time.perf_counter()
    for item in stored:
        recorder.insert_events([item])
    rate = len(stored) / (time.perf_counter() - start)
    with sqlite3.connect(path) as db:
        mode = db.execute("PRAGMA synchronous").fetchone()[0]
    datastore.close()
    return rate, {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(mode, str(mode))


def _eventsourcing_threads(path: Path, events: list[ThoughtRecorded], writers: int) -> float:
    """The same payloads through one recorder from ``writers`` threads, each its own aggregate."""
    import threading

    from eventsourcing.sqlite import SQLiteAggregateRecorder, SQLiteDatastore

    datastore = SQLiteDatastore(str(path))
    recorder = SQLiteAggregateRecorder(datastore)
    recorder.create_table()
    share = len(events) // writers
    work = [_stored(uuid.uuid4(), events[:share]) for _ in range(writers)]
    ready = threading.Barrier(writers + 1)

    def write(items: list[Any]) -> None:
        ready.wait()
        for item in items:
            recorder.insert_events([item])

    threads = [threading.Thread(target=write, args=(items,)) for items in work]
    for thread in threads:
        thread.start()
    ready.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    rate = share * writers / (time.perf_counter() - start)
    datastore.close()
    return rate


async def _ours_concurrent(
    path: Path, events: list[ThoughtRecorded], durability: Durability, writers: int
) -> float:
    """The same payloads from ``writers`` concurrent tasks, each appending to its own session."""
    store = await SqliteEventStore.open(path, durability=durability)
    share = len(events) // writers

    async def write(session: str) -> None:
        for version, event in enumerate(events[:share]):
            await store.append(session, [event], expected_version=version)

    try:
        start = time.perf_counter()
        await asyncio.gather(*(write(f"peer-{n}") for n in range(writers)))
        return share * writers / (time.perf_counter() - start)
    finally:
        await store.aclose()


WRITERS = 16
"""Concurrent writers in the group-commit row (agents thinking at once)."""

ROUNDS = 3
"""Alternating runs of each side per row; the row reports the median of each."""


async def _ours(path: Path, events: list[ThoughtRecorded], durability: Durability) -> float:
    store = await SqliteEventStore.open(path, durability=durability)
    try:
        start = time.perf_counter()
        for version, event in enumerate(events):
            await store.append("peer", [event], expected_version=version)
        return len(events) / (time.perf_counter() - start)
    finally:
        await store.aclose()


async def bench_peers(count: int = 3000) -> list[Result]:
    """Append ``count`` events one per call through both, at equal and at default durability."""
    try:
        import eventsourcing  # noqa: F401
    except ImportError:
        print("(eventsourcing not installed: pip install eventsourcing; peer figures skipped)")
        return []
    events = _events(count)
    rows: list[Result] = []
    theirs, full, normal, their_many, our_many = [], [], [], [], []
    their_sync = "?"
    # Alternating rounds, each on fresh files: a noisy neighbour hits both sides alike.
    for round_ in range(ROUNDS):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            rate, their_sync = _eventsourcing(folder / f"es{round_}.db", events)
            theirs.append(rate)
            # Their recorder leaves SQLite's WAL default (synchronous=FULL): compare like with
            # like, then show our default too.
            full.append(await _ours(folder / "full.db", events, "full"))
            normal.append(await _ours(folder / "normal.db", events, "normal"))
            their_many.append(_eventsourcing_threads(folder / "es-many.db", events, WRITERS))
            our_many.append(await _ours_concurrent(folder / "many.db", events, "full", WRITERS))
    baseline = statistics.median(theirs)
    for label, ours, target in (
        # At equal durability a figure: see docs/benchmarks.md, "Where the misses go".
        (f"durability=full (theirs: synchronous={their_sync})", statistics.median(full), None),
        ("our default durability=normal", statistics.median(normal), 1.0),
    ):
        rows.append(
            {
                "name": f"peers: append 1 event/call vs eventsourcing SQLite recorder, {label}",
                "ours_per_s": round(ours),
                "baseline": "eventsourcing SQLiteAggregateRecorder.insert_events, one per call",
                "baseline_per_s": round(baseline),
                "ratio": round(ours / baseline, 3),
                "target": target,
            }
        )
    ours_many, theirs_many = statistics.median(our_many), statistics.median(their_many)
    rows.append(
        {
            "name": f"peers: {WRITERS} concurrent writers, 1 event/call, durability=full",
            "ours_per_s": round(ours_many),
            "baseline": f"eventsourcing SQLite recorder driven from {WRITERS} threads",
            "baseline_per_s": round(theirs_many),
            "ratio": round(ours_many / theirs_many, 3),
            "target": 1.0,
        }
    )
    return rows


async def official_server() -> list[Result]:
    """The stdio round trip, ours against the official server's (skipped when it is absent)."""
    node = shutil.which("node")
    package = os.environ.get("THOUGHTLEDGER_OFFICIAL_SERVER")  # path to its dist/index.js
    if not node or not package or not os.path.exists(package):  # noqa: ASYNC240  # once, at start
        print(
            "(official server skipped: run `npm install @modelcontextprotocol/server-sequential-"
            "thinking` somewhere and set THOUGHTLEDGER_OFFICIAL_SERVER to its dist/index.js)"
        )
        return []
    from bench_mcp import _percentile, _thought, call, ours, spawned

    async def latency(command: list[str]) -> tuple[float, float]:
        samples: list[float] = []
        async with spawned(command) as client:
            for n in range(1, 501):
                start = time.perf_counter()
                await call(client, "sequentialthinking", _thought(n, 200, 500))
                samples.append(time.perf_counter() - start)
        samples = samples[50:]
        return _percentile(samples, 0.5) * 1000, _percentile(samples, 0.99) * 1000

    with tempfile.TemporaryDirectory() as tmp:
        our_p50, our_p99 = await latency(ours(Path(tmp) / "l.db"))
    their_p50, their_p99 = await latency([node, package])
    return [
        {
            "name": "peers: stdio round-trip vs the official server (ms)",
            "ours_p50_ms": round(our_p50, 3),
            "ours_p99_ms": round(our_p99, 3),
            "baseline": "official @modelcontextprotocol/server-sequential-thinking (in memory)",
            "baseline_p50_ms": round(their_p50, 3),
            "baseline_p99_ms": round(their_p99, 3),
            "ratio": round(our_p50 / their_p50, 3),
            "target": None,
            "lower_is_better": True,
        }
    ]


async def _main() -> None:
    for row in [*await bench_peers(), *await official_server()]:
        print(row)


if __name__ == "__main__":
    asyncio.run(_main())
