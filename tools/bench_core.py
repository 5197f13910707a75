"""The core rows of tools/bench: appends (SQLite, PostgreSQL, concurrent), time travel, replay.

Every figure is a ratio against a baseline measured in the same run (raw sqlite3 or asyncpg
doing the same writes, a full replay for a point-in-time read).
"""

import asyncio
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench_stats import chained_rows, stored

from thoughtledger.ledger.codec import encode_payload
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.events import ThoughtRecorded
from thoughtledger.ledger.store.base import utc_now
from thoughtledger.ledger.store.postgres import PostgresEventStore
from thoughtledger.ledger.store.sqlite import SqliteEventStore

DEFAULT_PG = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
Result = dict[str, Any]


def _event(n: int) -> ThoughtRecorded:
    return ThoughtRecorded(
        thought=f"Thought {n}: weigh the options and note what changed since the last step.",
        thought_number=n,
        total_thoughts=n + 1,
        next_thought_needed=True,
    )


def _raw_rows(count: int, session_id: str, *, binary: bool = False) -> list[tuple[Any, ...]]:
    """Rows with real payloads and hashes, computed before the clock starts.

    ``binary``: the event id and hashes as the SQLite log keeps them (PostgreSQL's statement
    converts the text itself, as the store's does).
    """
    now = format_time(utc_now())
    events = [
        (str(uuid.uuid4()), now, "thought.recorded", encode_payload(_event(n)))
        for n in range(1, count + 1)
    ]
    rows = chained_rows(session_id, events)
    return [(row[1], *row) for row in (map(stored, rows) if binary else rows)]


_SQLITE_INSERT = (
    "INSERT INTO tl_events (position, session_id, version, event_id, recorded_at, "
    "schema_version, event_type, payload, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?,?)"
)
_PG_INSERT = (
    "INSERT INTO tl_events (position, session_id, version, event_id, recorded_at, "
    "schema_version, event_type, payload, prev_hash, hash) "
    "VALUES ($1,$2,$3,$4::uuid,$5,$6,$7,$8,decode($9, 'hex'),decode($10, 'hex'))"
)


def _raw_sqlite_connection(path: Path) -> tuple[sqlite3.Connection, int]:
    """A raw connection with the store's PRAGMAs, and the last position already used."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    base: int = db.execute("SELECT coalesce(max(position), 0) FROM tl_events").fetchone()[0]
    return db, base


def _raw_sqlite(path: Path, count: int) -> float:
    """Raw sqlite3: one event per transaction, same schema and PRAGMAs as the store."""
    rows = _raw_rows(count, "raw", binary=True)
    db, base = _raw_sqlite_connection(path)
    insert = _SQLITE_INSERT
    start = time.perf_counter()
    for row in rows:
        db.execute("BEGIN IMMEDIATE")
        db.execute(insert, (base + row[0], *row[1:]))
        db.execute("COMMIT")
    elapsed = time.perf_counter() - start
    db.close()
    return count / elapsed


async def _store_loop(
    append: Callable[[str, list[ThoughtRecorded], int], Awaitable[object]], count: int
) -> float:
    events = [_event(n) for n in range(1, count + 1)]
    session = f"bench-{uuid.uuid4().hex[:8]}"
    start = time.perf_counter()
    for n, event in enumerate(events):
        await append(session, [event], n)
    return count / (time.perf_counter() - start)


async def bench_append_sqlite(count: int) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        store = await SqliteEventStore.open(path)

        async def append(session: str, events: list[ThoughtRecorded], version: int) -> object:
            return await store.append(session, events, expected_version=version)

        await _store_loop(append, 200)  # warm up: statement caches, page cache
        ours = await _store_loop(append, count)
        await store.aclose()
        raw = _raw_sqlite(path, count)
        # Run the store again after raw so a drift of the machine shows up in both directions.
        store = await SqliteEventStore.open(path)
        ours = max(ours, await _store_loop(append, count))
        await store.aclose()
    return {
        "name": "append sqlite (1 event/append, durability=normal)",
        "ours_per_s": round(ours),
        "baseline": "raw sqlite3 BEGIN/INSERT/COMMIT",
        "baseline_per_s": round(raw),
        "ratio": round(ours / raw, 3),
        "target": 0.25,
    }


async def bench_append_postgres(url: str, count: int) -> Result:
    import asyncpg

    schema = f"tl_bench_{uuid.uuid4().hex[:8]}"
    store = await PostgresEventStore.open(url, pg_schema=schema, pool_size=2)
    dsn = url.replace("postgresql+asyncpg://", "postgresql://", 1)
    raw_conn = await asyncpg.connect(dsn, server_settings={"search_path": schema})
    try:

        async def append(session: str, events: list[ThoughtRecorded], version: int) -> object:
            return await store.append(session, events, expected_version=version)

        await _store_loop(append, 200)
        ours = await _store_loop(append, count)
        rows = _raw_rows(count, "raw")
        base = 1 << 62  # clear of the store's transaction-id positions
        insert = _PG_INSERT
        now = utc_now()
        start = time.perf_counter()
        for row in rows:
            async with raw_conn.transaction():
                await raw_conn.execute(insert, base + row[0], *row[1:4], now, *row[5:])
        raw = count / (time.perf_counter() - start)
        ours = max(ours, await _store_loop(append, count))
    finally:
        await store.aclose()  # first: closing, it indexes what its appends left waiting
        await raw_conn.execute("DROP SCHEMA " + schema + " CASCADE")
        await raw_conn.close()
    return {
        "name": "append postgres (1 event/append)",
        "ours_per_s": round(ours),
        "baseline": "raw asyncpg BEGIN/INSERT/COMMIT",
        "baseline_per_s": round(raw),
        "ratio": round(ours / raw, 3),
        "target": 0.8,
    }


async def bench_asof(thoughts: int = 10_000, at: int = 9_000) -> Result:
    """Read version ``at`` of a ``thoughts``-thought session, next to a full replay of it."""
    from thoughtledger.api.service import Ledger
    from thoughtledger.projections.state import empty, replay

    with tempfile.TemporaryDirectory() as tmp:
        store = await SqliteEventStore.open(Path(tmp) / "asof.db")
        ledger = Ledger(store)
        events = [_event(n) for n in range(1, thoughts + 1)]
        for first in range(0, thoughts, 1000):  # batched: the bench is about reading
            await store.append("long", events[first : first + 1000], expected_version=first)
        cold_start = time.perf_counter()
        await ledger.state("long", as_of_version=at)  # first read: loads and caches the session
        cold = time.perf_counter() - cold_start
        asof_times: list[float] = []
        replay_times: list[float] = []
        for _ in range(5):
            start = time.perf_counter()
            state = await ledger.state("long", as_of_version=at)
            asof_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            replayed = replay(await store.read_stream("long", to_version=at), empty("long"))
            replay_times.append(time.perf_counter() - start)
        assert state == replayed
        await store.aclose()
    asof_ms, replay_ms = min(asof_times) * 1000, min(replay_times) * 1000
    return {
        "name": f"as-of v{at} of a {thoughts}-thought session (ms, lower is better)",
        "ours_per_s": round(asof_ms, 2),
        "baseline": f"full replay from the store (first, cold read: {cold * 1000:.0f} ms)",
        "baseline_per_s": round(replay_ms, 2),
        "ratio": round(replay_ms / asof_ms, 1),
        "target": round(replay_ms / 20, 1),
        "unit": "ms",
    }


def _raw_sqlite_batched(path: Path, count: int, per_tx: int = 100) -> float:
    """Raw sqlite3 committing ``per_tx`` rows per transaction, same schema and PRAGMAs."""
    rows = _raw_rows(count, "raw-batched", binary=True)
    db, base = _raw_sqlite_connection(path)
    insert = _SQLITE_INSERT
    start = time.perf_counter()
    for first in range(0, count, per_tx):
        db.execute("BEGIN IMMEDIATE")
        db.executemany(insert, [(base + r[0], *r[1:]) for r in rows[first : first + per_tx]])
        db.execute("COMMIT")
    elapsed = time.perf_counter() - start
    db.close()
    return count / elapsed


async def bench_concurrent(sessions: int = 64, thoughts: int = 200) -> Result:
    """``sessions`` agents in one process, each recording ``thoughts`` thoughts through the API.

    Reported without a target (verdict ``info``): see docs/benchmarks.md.
    """
    from thoughtledger.api.service import Ledger

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "concurrent.db"
        ledger = Ledger(await SqliteEventStore.open(path))

        async def agent(n: int) -> None:
            for t in range(1, thoughts + 1):
                await ledger.think(
                    f"agent-{n}",
                    {
                        "thought": f"agent {n} thought {t}: what changed, and what next",
                        "thought_number": t,
                        "total_thoughts": thoughts,
                        "next_thought_needed": t < thoughts,
                    },
                )

        start = time.perf_counter()
        await asyncio.gather(*(agent(n) for n in range(sessions)))
        ours = sessions * thoughts / (time.perf_counter() - start)
        await ledger.aclose()
        raw = _raw_sqlite_batched(path, sessions * thoughts)
    return {
        "name": f"concurrent: {sessions} agents x {thoughts} thoughts, SQLite (thoughts/s)",
        "ours_per_s": round(ours),
        "baseline": "raw sqlite3, 100 rows per transaction",
        "baseline_per_s": round(raw),
        "ratio": round(ours / raw, 3),
        # A figure, not a target: about 95 us of Python a thought, spread thin over parts
        # already in C or Rust where they can be (docs/benchmarks.md, "Where the misses go").
        "target": None,
    }


async def _rebuild_rate(path: Path, events: int) -> tuple[float, int, int]:
    """Events per second of ``Ledger.rebuild()`` on the ledger at ``path``, sessions, events."""
    from thoughtledger.api.service import Ledger

    ledger = Ledger(await SqliteEventStore.open(path))
    try:
        start = time.perf_counter()
        states = await ledger.rebuild()
        rate = events / (time.perf_counter() - start)
        seen = sum(s.version for s in states.values())
    finally:
        await ledger.aclose()
    return rate, len(states), seen


async def bench_replay(events: int = 1_000_000) -> Result:
    """Rebuild every session's history and branch sets from the whole log, page by page.

    The ledger is generated by plain inserts, which nothing indexes for search: a store that
    opens it for writing takes them into the index in the background (see
    ``ledger.store.sqlite.search_follow``), on the event loop the rebuild runs on. The figure is
    the rebuild of a ledger whose index is complete, as an appending writer leaves it (a store
    opened and closed once first); the same rebuild while the index catches up over the whole
    log is reported beside it.
    """
    import shutil

    from bench_stats import _raw_loop, generate_ledger

    with tempfile.TemporaryDirectory() as tmp:
        path, behind = Path(tmp) / "replay.db", Path(tmp) / "behind.db"
        # Sessions of about 100 events: 1M events make about 10k sessions.
        await generate_ledger(path, events, lengths=(80, 118))
        shutil.copyfile(path, behind)
        await (await SqliteEventStore.open(path)).aclose()  # the index takes in every thought
        ours, sessions, seen = await _rebuild_rate(path, events)
        catching_up, _, _ = await _rebuild_rate(behind, events)
        raw = _raw_loop(path)
    assert seen == events
    return {
        "name": f"replay: history and branch sets of {events:,} events, {sessions:,} sessions",
        "ours_per_s": round(ours),
        "baseline": "raw sqlite3 SELECT payload + json.loads over the same rows",
        "baseline_per_s": round(raw),
        "ratio": round(ours / raw, 3),
        "target": round(300_000 / raw, 3),
        "absolute_target_per_s": 300_000,
        "while_the_index_catches_up_per_s": round(catching_up),
    }


async def bench_pg_concurrent(url: str, connections: int = 16, per_task: int = 150) -> Result:
    """``connections`` tasks appending one event at a time, ours against raw asyncpg."""
    import asyncpg

    schema = f"tl_bench_{uuid.uuid4().hex[:8]}"
    store = await PostgresEventStore.open(
        url, pg_schema=schema, pool_size=connections, writers=connections
    )
    dsn = url.replace("postgresql+asyncpg://", "postgresql://", 1)
    pool = await asyncpg.create_pool(
        dsn, min_size=connections, max_size=connections, server_settings={"search_path": schema}
    )
    try:

        async def ours_task(n: int) -> None:
            for version in range(per_task):
                await store.append(f"c{n}", [_event(version + 1)], expected_version=version)

        start = time.perf_counter()
        await asyncio.gather(*(ours_task(n) for n in range(connections)))
        ours = connections * per_task / (time.perf_counter() - start)

        insert = _PG_INSERT
        now = utc_now()

        async def raw_task(n: int) -> None:
            rows = _raw_rows(per_task, f"raw{n}")
            base = (1 << 62) + n * 1_000_000  # clear of the store's transaction-id positions
            async with pool.acquire() as connection:
                for row in rows:
                    async with connection.transaction():
                        await connection.execute(insert, base + row[0], *row[1:4], now, *row[5:])

        start = time.perf_counter()
        await asyncio.gather(*(raw_task(n) for n in range(connections)))
        raw = connections * per_task / (time.perf_counter() - start)
        await store.aclose()  # first: closing, it indexes what its appends left waiting
        async with pool.acquire() as connection:
            await connection.execute("DROP SCHEMA " + schema + " CASCADE")
    finally:
        await pool.close()
        await store.aclose()
    return {
        "name": f"concurrent append, PostgreSQL, {connections} connections (events/s)",
        "ours_per_s": round(ours),
        "baseline": f"raw asyncpg pool of {connections}, BEGIN/INSERT/COMMIT",
        "baseline_per_s": round(raw),
        "ratio": round(ours / raw, 3),
        "target": 0.8,
    }


async def pg_available(url: str) -> bool:
    import asyncpg

    try:
        dsn = url.replace("postgresql+asyncpg://", "postgresql://", 1)
        connection = await asyncio.wait_for(asyncpg.connect(dsn), timeout=3)
    except (TimeoutError, OSError, asyncpg.PostgresError):
        return False
    await connection.close()
    return True


DURABILITY = (
    "SQLite: durability=normal (WAL, synchronous=NORMAL: survives a process crash) unless a row "
    "says full; PostgreSQL: server defaults (synchronous_commit=on: survives power loss)"
)
