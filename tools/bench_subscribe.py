"""Live latency of a subscription: an append in one process, the event in another's subscriber.

A child process appends thoughts at a steady pace, each carrying the moment it was sent
(``time.monotonic()``, one clock for every process of the machine); the parent's subscription
measures how long each took to arrive. The baseline, measured in the same run, is the bare
mechanism without the ledger: on SQLite a loop that polls ``PRAGMA data_version`` at the same
interval while the child commits bare rows, on PostgreSQL a bare LISTEN while the child sends
bare NOTIFYs.

Usage: tools/bench subscribe [--pg URL]   (or: tools/bench_subscribe.py child MODE URL COUNT)
"""

import asyncio
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from thoughtledger.api.bootstrap import open_store
from thoughtledger.ledger.events import ThoughtRecorded
from thoughtledger.ledger.store.sqlite.store import POLL_INTERVAL

Result = dict[str, Any]

PACE = 0.037
"""Seconds between the child's appends (not a multiple of the polling interval)."""

_BARE_TABLE = "CREATE TABLE IF NOT EXISTS bare (sent REAL)"


async def _child(mode: str, url: str, count: int, table: str = "") -> None:
    """The writing process: ``count`` stamped appends (or bare commits / notifies), paced."""
    if mode == "ledger":
        store = await open_store(url)
        try:
            for n in range(count):
                await asyncio.sleep(PACE)
                stamp = repr(time.monotonic())
                event = ThoughtRecorded(
                    thought=stamp,
                    thought_number=n + 1,
                    total_thoughts=count,
                    next_thought_needed=True,
                )
                await store.append("bench", [event], expected_version=n)
        finally:
            await store.aclose()
    elif mode == "bare-sqlite":
        db = sqlite3.connect(url, isolation_level=None)
        for _ in range(count):
            await asyncio.sleep(PACE)
            db.execute("INSERT INTO bare VALUES (?)", (time.monotonic(),))
        db.close()
    else:
        import asyncpg

        connection = await asyncpg.connect(url)
        for _ in range(count):
            await asyncio.sleep(PACE)
            # As an append: the row commits (to disk), then a notification follows it.
            await connection.execute(f"INSERT INTO {table} VALUES ($1)", time.monotonic())  # noqa: S608
            await connection.execute(f"NOTIFY {table}")
        await connection.close()


def _spawn(mode: str, url: str, count: int, table: str = "") -> subprocess.Popen[bytes]:
    command = [sys.executable, __file__, "child", mode, url, str(count), table]
    return subprocess.Popen(command)  # noqa: S603  # our interpreter, our script


async def _ledger_latencies(url: str, count: int) -> list[float]:
    store = await open_store(url)
    latencies: list[float] = []
    child = _spawn("ledger", url, count)
    try:
        async for record in store.subscribe():
            latencies.append(time.monotonic() - float(record.event.thought))  # type: ignore[union-attr]
            if len(latencies) == count:
                break
    finally:
        await asyncio.to_thread(child.wait, 60)
        await store.aclose()
    return latencies


async def _bare_sqlite_latencies(path: Path, count: int) -> list[float]:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(_BARE_TABLE)
    child = _spawn("bare-sqlite", str(path), count)
    latencies: list[float] = []
    seen, version = 0, db.execute("PRAGMA data_version").fetchone()[0]
    try:
        while len(latencies) < count:
            await asyncio.sleep(POLL_INTERVAL)
            now_version = db.execute("PRAGMA data_version").fetchone()[0]
            if now_version == version:
                continue
            version = now_version
            rows = db.execute("SELECT rowid, sent FROM bare WHERE rowid > ?", (seen,)).fetchall()
            now = time.monotonic()
            for rowid, sent in rows:
                latencies.append(now - sent)
                seen = rowid
    finally:
        await asyncio.to_thread(child.wait, 60)
        db.close()
    return latencies[:count]


async def _bare_postgres_latencies(dsn: str, count: int) -> list[float]:
    import asyncpg

    table = f"bench_bare_{uuid.uuid4().hex[:8]}"
    connection = await asyncpg.connect(dsn)
    await connection.execute(f"CREATE TABLE {table} (sent float8)")
    latencies: list[float] = []
    woken = asyncio.Event()
    await connection.add_listener(table, lambda *_: woken.set())
    child = _spawn("bare-postgres", dsn, count, table)
    try:
        async with asyncio.timeout(120):
            while len(latencies) < count:
                await woken.wait()
                woken.clear()
                rows = await connection.fetch(
                    f"SELECT sent FROM {table} OFFSET $1",  # noqa: S608  # our own name
                    len(latencies),
                )
                now = time.monotonic()
                latencies += [now - row["sent"] for row in rows]
    finally:
        await asyncio.to_thread(child.wait, 60)
        await connection.execute(f"DROP TABLE {table}")
        await connection.close()
    return latencies[:count]


def _ms(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)


def _row(name: str, ours: list[float], bare: list[float], baseline: str) -> Result:
    return {
        "name": name,
        "ratio": round(statistics.median(ours) / statistics.median(bare), 2),
        "lower_is_better": True,
        "median_ms": _ms(ours, 0.5),
        "p95_ms": _ms(ours, 0.95),
        "baseline_median_ms": _ms(bare, 0.5),
        "baseline_p95_ms": _ms(bare, 0.95),
        "events": len(ours),
        "baseline": baseline,
    }


async def bench_subscribe(pg_url: str | None, count: int = 150) -> list[Result]:
    """Live latency rows for SQLite and (when ``pg_url`` is given) PostgreSQL."""
    rows: list[Result] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.db"
        ours = await _ledger_latencies(f"sqlite:///{path}", count)
        bare = await _bare_sqlite_latencies(Path(folder) / "bare.db", count)
    poll_ms = f"{POLL_INTERVAL * 1000:.0f} ms"
    rows.append(
        _row(
            f"subscription live latency, SQLite, another process (poll {poll_ms})",
            ours,
            bare,
            f"bare PRAGMA data_version poll every {poll_ms}, bare inserts",
        )
    )
    if pg_url is not None:
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        ours = await _ledger_latencies(f"{pg_url}?schema={schema}", count)
        dsn = pg_url.replace("postgresql+asyncpg://", "postgresql://", 1)
        bare = await _bare_postgres_latencies(dsn, count)
        import asyncpg

        admin = await asyncpg.connect(dsn)
        await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.close()
        rows.append(
            _row(
                "subscription live latency, PostgreSQL, another process (NOTIFY)",
                ours,
                bare,
                "bare INSERT (commit) then NOTIFY from one process, LISTEN then SELECT in another",
            )
        )
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        mode, url, count, table = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
        asyncio.run(_child(mode, url, count, table))
    else:
        for found in asyncio.run(bench_subscribe(sys.argv[1] if len(sys.argv) > 1 else None)):
            print(found)
