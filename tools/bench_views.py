"""Benchmark of the analytics views: the `stats` queries answered from the views, against the
hand-written SQL `stats` runs (thoughtledger/ledger/store/sql_stats.py), on the same generated
ledger.

Usage:
    tools/bench_views.py [--events N] [--json FILE]

Both sides compute the same two results (one row of facts per session, and the histogram of
times between thoughts), each running its two queries at once on two connections; the ratio is
views' time over hand-written time (target: <= 2).
"""

import argparse
import asyncio
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_stats import generate_ledger, generate_rows

from thoughtledger.ledger.store.sqlite import SqliteEventStore

FACTS = (
    "SELECT session_id, substr(started_at, 1, 10), agent, client, events, thoughts, revisions,"
    " branches, first_estimate, last_estimate, completed FROM tl_session_stats"
)
GAPS = (
    "SELECT CAST(round((julianday(b.recorded_at) - julianday(a.recorded_at)) * 86400000)"
    " AS INTEGER) AS ms, count(*) FROM tl_thoughts a JOIN tl_thoughts b"
    " ON b.session_id = a.session_id AND b.version = a.version + 1 GROUP BY ms"
)


def _query(path: Path, sql: str) -> list[Any]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


async def _views(path: Path) -> tuple[float, int, int]:
    start = time.perf_counter()
    facts, gaps = await asyncio.gather(
        asyncio.to_thread(_query, path, FACTS), asyncio.to_thread(_query, path, GAPS)
    )
    return time.perf_counter() - start, len(facts), sum(n for _, n in gaps)


async def _hand_written(path: Path) -> tuple[float, int, int]:
    store = await SqliteEventStore.open(path)
    try:
        start = time.perf_counter()
        rows = await store.stats.stats_rows()
        elapsed = time.perf_counter() - start
    finally:
        await store.aclose()
    return elapsed, len(rows.facts), sum(rows.gaps_ms.values())


async def bench_views(events: int) -> list[dict[str, Any]]:
    """Time the stats queries on the views against the hand-written ones, best of three each."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "views.db"
        await generate_ledger(path, events)
        ours: list[float] = []
        hand: list[float] = []
        for _ in range(3):  # alternating, so the page cache and a drifting machine favour neither
            seconds, sessions, gaps = await _views(path)
            ours.append(seconds)
            seconds_hand, sessions_hand, gaps_hand = await _hand_written(path)
            hand.append(seconds_hand)
            assert (sessions, gaps) == (sessions_hand, gaps_hand), "the views answer differently"
    best, best_hand = min(ours), min(hand)
    return [
        {
            "name": f"stats from the views, sqlite ({events} events)",
            "views_s": round(best, 3),
            "hand_written_s": round(best_hand, 3),
            "ratio": round(best / best_hand, 3),
            "target": 2.0,
        }
    ]


PG_FACTS = (
    "SELECT session_id, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), agent, client,"
    " events, thoughts, revisions, branches, first_estimate, last_estimate, completed"
    " FROM tl_session_stats"
)
PG_GAPS = (
    "SELECT CAST(floor(extract(epoch FROM b.recorded_at) * 1000 + 0.5)"
    " - floor(extract(epoch FROM a.recorded_at) * 1000 + 0.5) AS BIGINT) AS ms, count(*)"
    " FROM tl_thoughts a JOIN tl_thoughts b"
    " ON b.session_id = a.session_id AND b.version = a.version + 1 GROUP BY ms"
)


async def bench_views_postgres(url: str, events: int) -> list[dict[str, Any]]:
    """The same comparison on PostgreSQL: the generated rows copied into a fresh schema."""
    import uuid
    from datetime import datetime

    import asyncpg

    from thoughtledger.ledger.store.postgres import PostgresEventStore

    schema = f"tl_bench_{uuid.uuid4().hex[:8]}"
    dsn = url.replace("postgresql+asyncpg://", "postgresql://", 1)
    store = await PostgresEventStore.open(url, pg_schema=schema, pool_size=2)
    await store.aclose()
    connection = await asyncpg.connect(dsn, server_settings={"search_path": schema})

    def moment(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))

    try:
        position = 0
        events_rows = []
        for rows, _head in generate_rows(events):
            for row in rows:
                position += 1
                events_rows.append((position, row[0], row[1], row[2], moment(row[3]), *row[4:]))
        await connection.copy_records_to_table("tl_events", records=events_rows)
        await connection.execute("ANALYZE")
        ours: list[float] = []
        hand: list[float] = []
        for _ in range(3):
            pool = await asyncpg.create_pool(
                dsn, min_size=2, max_size=2, server_settings={"search_path": schema}
            )
            start = time.perf_counter()
            facts, gaps = await asyncio.gather(pool.fetch(PG_FACTS), pool.fetch(PG_GAPS))
            ours.append(time.perf_counter() - start)
            await pool.close()
            opened = await PostgresEventStore.open(url, pg_schema=schema, pool_size=2)
            start = time.perf_counter()
            rows_hand = await opened.stats.stats_rows()
            hand.append(time.perf_counter() - start)
            await opened.aclose()
            assert len(facts) == len(rows_hand.facts), "the views answer differently"
            assert sum(r[1] for r in gaps) == sum(rows_hand.gaps_ms.values())
    finally:
        await connection.execute(f"DROP SCHEMA {schema} CASCADE")
        await connection.close()
    best, best_hand = min(ours), min(hand)
    return [
        {
            "name": f"stats from the views, postgres ({events} events)",
            "views_s": round(best, 3),
            "hand_written_s": round(best_hand, 3),
            "ratio": round(best / best_hand, 3),
            "target": 2.0,
        }
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/bench_views.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--pg", default=os.environ.get("THOUGHTLEDGER_TEST_PG_URL"))
    args = parser.parse_args(argv)
    rows = asyncio.run(bench_views(args.events))
    if args.pg:
        rows += asyncio.run(bench_views_postgres(args.pg, args.events))
    else:
        print("(no --pg / THOUGHTLEDGER_TEST_PG_URL: the PostgreSQL figures are skipped)")
    for row in rows:
        verdict = "ok" if row["ratio"] <= row["target"] else "ABOVE"
        print(
            f"{row['name']}: views {row['views_s']} s, hand-written SQL {row['hand_written_s']} s,"
            f" ratio {row['ratio']} (target <= {row['target']}): {verdict}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
