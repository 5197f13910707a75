"""Benchmark of batches: 100 thoughts in one batch against the same 100 thoughts one call each.

Usage:
    tools/bench batch [--pg URL]

Both go through the facade (``Session.think_batch`` against ``Session.think`` a thought at a
time) on the same store in the same run, alternating round for round so that both see the same
machine; each round records a new session. One row per backend (SQLite file, PostgreSQL when
reachable); the ratio is the single calls' time over the batch's. A last row does the same over
MCP stdio, as an agent calls it: ``sequentialthinking`` 100 times against one
``sequential_thinking_batch`` call.

Every row is a figure without a target: a batch saves the commits of single calls and still pays
each row's work (see docs/benchmarks.md, "Where the misses go").
"""

import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.postgres import PostgresEventStore
from thoughtledger.ledger.store.sqlite import SqliteEventStore

Result = dict[str, Any]
THOUGHTS = 100
ROUNDS = 7


def _thoughts(count: int) -> list[dict[str, Any]]:
    return [
        {
            "thought": f"Thought {n}: weigh the options and note what changed since the last step.",
            "thought_number": n,
            "total_thoughts": count,
            "next_thought_needed": n < count,
        }
        for n in range(1, count + 1)
    ]


async def _row(store: LedgerStore, backend: str) -> Result:
    ledger = Ledger(store, ttl=None)
    thoughts = _thoughts(THOUGHTS)
    singles: list[float] = []
    batches: list[float] = []
    try:
        for round_ in range(ROUNDS + 1):
            one = ledger.session(f"single-{uuid.uuid4().hex[:12]}")
            begin = time.perf_counter()
            for thought in thoughts:
                await one.think(**thought)
            single = time.perf_counter() - begin
            many = ledger.session(f"batch-{uuid.uuid4().hex[:12]}")
            begin = time.perf_counter()
            await many.think_batch(thoughts)
            batch = time.perf_counter() - begin
            assert (await many.state()).thought_count == THOUGHTS
            if round_:  # the first round warms caches and connections
                singles.append(single)
                batches.append(batch)
    finally:
        await ledger.aclose()
    ours, baseline = statistics.median(batches), statistics.median(singles)
    return {
        "name": f"batch of {THOUGHTS} thoughts vs {THOUGHTS} single calls ({backend})",
        "ours_ms": round(ours * 1000, 2),
        "baseline": f"the same {THOUGHTS} thoughts, one Session.think call each, same store",
        "baseline_ms": round(baseline * 1000, 2),
        "rounds": ROUNDS,
        "ratio": round(baseline / ours, 1),
        "target": None,
    }


async def bench_batch_mcp() -> Result:
    """The same over MCP stdio (a real ``thoughtledger serve --tools all`` on an SQLite file)."""
    from bench_mcp import call, ours, spawned

    thoughts = [
        {
            "thought": item["thought"],
            "thoughtNumber": item["thought_number"],
            "totalThoughts": item["total_thoughts"],
            "nextThoughtNeeded": item["next_thought_needed"],
        }
        for item in _thoughts(THOUGHTS)
    ]
    singles: list[float] = []
    batches: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        async with spawned(ours(Path(tmp) / "mcp.db", "--tools", "all")) as client:
            for round_ in range(ROUNDS + 1):
                one = f"single-{uuid.uuid4().hex[:12]}"
                begin = time.perf_counter()
                for thought in thoughts:
                    await call(client, "sequentialthinking", {**thought, "sessionId": one})
                single = time.perf_counter() - begin
                many = {"thoughts": thoughts, "sessionId": f"batch-{uuid.uuid4().hex[:12]}"}
                begin = time.perf_counter()
                await call(client, "sequential_thinking_batch", many)
                batch = time.perf_counter() - begin
                if round_:
                    singles.append(single)
                    batches.append(batch)
    ours_s, baseline = statistics.median(batches), statistics.median(singles)
    return {
        "name": f"batch of {THOUGHTS} thoughts vs {THOUGHTS} single calls (MCP stdio, SQLite)",
        "ours_ms": round(ours_s * 1000, 2),
        "baseline": f"the same {THOUGHTS} thoughts, one sequentialthinking call each",
        "baseline_ms": round(baseline * 1000, 2),
        "rounds": ROUNDS,
        "ratio": round(baseline / ours_s, 1),
    }


async def bench_batch_store(pg: str | None) -> AsyncIterator[Result]:
    """One row per backend (SQLite, then PostgreSQL when ``pg`` is given), each as measured."""
    with tempfile.TemporaryDirectory() as tmp:
        yield await _row(await SqliteEventStore.open(Path(tmp) / "batch.db"), "SQLite")
    if pg is not None:
        schema = f"tl_bench_batch_{uuid.uuid4().hex[:8]}"
        store = await PostgresEventStore.open(pg, pg_schema=schema)
        try:
            yield await _row(store, "PostgreSQL")
        finally:
            await _drop(pg, schema)


async def bench_batch(pg: str | None) -> list[Result]:
    """Every row: per backend, then over MCP (the single calls' median time over the batch's)."""
    rows = [row async for row in bench_batch_store(pg)]
    return [*rows, await bench_batch_mcp()]


async def _drop(pg: str, schema: str) -> None:
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(pg)
    try:
        async with engine.begin() as connection:
            await connection.execute(sa.schema.DropSchema(schema, cascade=True))
    finally:
        await engine.dispose()
