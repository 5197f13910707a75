"""Benchmark of derived data following the log: nothing derived runs before a first answer or
inside an append.

Usage:
    tools/bench derived [--derived-thoughts N] [--events N] [--pg URL]

Two rows, each ours over a baseline measured in the same run:

* **first answer**: ``thoughtledger serve --db sqlite:///...`` over stdio, from spawning it to
  its answer to MCP ``initialize``, on a ledger of N thoughts (2M by default) whose loop marks
  are all behind (written through the store alone, as an upgraded ledger's are: every event
  after the marks' position), against the same server on an empty ledger; interleaved rounds,
  the marks taken back behind before each (a round's server may take some in before it exits).
  The limit is 1.5 s; the ratio says what the ledger's size costs the first answer.
* **appends**: one thought per append (``Ledger.think``) with every projection following the
  log (the loop marks and the search index) against the same appends with none (the marks not
  following; the index told it is complete past the log's end), SQLite and PostgreSQL, the
  median of interleaved rounds. The work the projections defer (the marks' catch-up after a
  round) is timed beside it, untimed in the round, and reported as the ratio with it included;
  the index's catch-ups run during the rounds (in the background, or in an append's
  transaction on SQLite) and are inside the figure.
"""

import asyncio
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.lines import LineClient  # noqa: E402  # the stdio tests' client
from thoughtledger.api.service import Ledger  # noqa: E402
from thoughtledger.ledger.events import SessionStarted, ThoughtRecorded  # noqa: E402
from thoughtledger.ledger.store.sqlite import SqliteEventStore  # noqa: E402

Result = dict[str, Any]
WAIT = 120.0
"""Seconds a server may take to answer (bounds a round; a missed answer fails the bench)."""
FIRST_ANSWER_LIMIT = 1.5
ROUNDS = 5
APPEND_ROUNDS = 21
_WORDS = [f"word{n}" for n in range(300)]
_PER_SESSION = 100


def _command(db: Path) -> list[str]:
    script = Path(sys.executable).parent / "thoughtledger"
    launcher = (
        [str(script)] if script.exists() else [sys.executable, "-m", "thoughtledger.adapters.cli"]
    )
    return [*launcher, "serve", "--db", f"sqlite:///{db}"]


async def _first_answer(db: Path) -> float:
    """Seconds from spawning the server on ``db`` to its answer to ``initialize``."""
    env = {**os.environ, "DISABLE_THOUGHT_LOGGING": "true"}
    start = time.perf_counter()
    process = await anyio.open_process(_command(db), cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        await LineClient(process, wait=WAIT).handshake("bench")
        return time.perf_counter() - start
    finally:
        assert process.stdin is not None
        await process.stdin.aclose()  # EOF: the server stops on its own
        with anyio.move_on_after(WAIT):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


async def _fill(path: Path, thoughts: int) -> None:
    """A ledger of ``thoughts`` thoughts in sessions of 100, every tenth a repeat, written
    through the store alone (no ledger: the loop marks take none of it in)."""
    chosen = random.Random(7)
    store = await SqliteEventStore.open(path)
    try:
        for first in range(0, thoughts, _PER_SESSION):
            texts: list[str] = []
            events: list[Any] = [SessionStarted(metadata={"agent": "bench"})]
            for n in range(min(_PER_SESSION, thoughts - first)):
                if n % 10 == 9:
                    text = texts[chosen.randrange(len(texts))].upper()
                else:
                    text = " ".join(chosen.choices(_WORDS, k=chosen.randrange(8, 30)))
                texts.append(text)
                events.append(
                    ThoughtRecorded(
                        thought=text,
                        thought_number=n + 1,
                        total_thoughts=_PER_SESSION,
                        next_thought_needed=True,
                    )
                )
            await store.append(f"s{first // _PER_SESSION:07d}", events, expected_version=0)
    finally:
        await store.aclose()


def _all_behind(path: Path) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("DELETE FROM tl_loops")
    db.execute("UPDATE tl_loops_through SET position = 0")
    db.close()


async def bench_first_answer(thoughts: int) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        big, empty = Path(tmp) / "big.db", Path(tmp) / "empty.db"
        begin = time.perf_counter()
        await _fill(big, thoughts)
        filled = time.perf_counter() - begin
        store = await SqliteEventStore.open(empty)
        await store.aclose()
        _all_behind(big)
        await _first_answer(big)  # the files in the page cache, the interpreter's too
        await _first_answer(empty)
        ours, base = [], []
        for round_ in range(ROUNDS):
            _all_behind(big)
            if round_ % 2:
                base.append(await _first_answer(empty))
                ours.append(await _first_answer(big))
            else:
                ours.append(await _first_answer(big))
                base.append(await _first_answer(empty))
        through = sqlite3.connect(big).execute("SELECT position FROM tl_loops_through").fetchone()
    ours_s, base_s = statistics.median(ours), statistics.median(base)
    return {
        "name": f"derived: serve answers initialize on {thoughts:,} thoughts whose loop marks are "
        "all behind (SQLite, stdio)",
        "ours_s": round(ours_s, 3),
        "baseline": f"the same server on an empty ledger; median of {ROUNDS} interleaved rounds",
        "baseline_s": round(base_s, 3),
        "ratio": round(ours_s / base_s, 3),
        "target": 1.25,
        "lower_is_better": True,
        "limit_s": FIRST_ANSWER_LIMIT,
        "within_limit": ours_s <= FIRST_ANSWER_LIMIT,
        "fill_s": round(filled, 1),
        "marks_position_after_last_round": through[0] if through else None,
    }


def _arguments(n: int) -> dict[str, Any]:
    return {
        "thought": f"Thought {n}: weigh the options and note what changed since the last step.",
        "thought_number": n,
        "total_thoughts": n + 1,
        "next_thought_needed": True,
    }


class _Thinker:
    """One ledger and one session of it, one thought per append."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.session = f"bench-{uuid.uuid4().hex[:8]}"
        self.number = 0

    async def rate(self, count: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            self.number += 1
            await self.ledger.think(self.session, _arguments(self.number))
        return count / (time.perf_counter() - start)


async def _append_cost(on: Ledger, off: Ledger, count: int) -> dict[str, float]:
    following, bare = _Thinker(on), _Thinker(off)
    await following.rate(200)
    await bare.rate(200)
    await on.mark_loops()
    ratios, with_deferred, rates_on, rates_off = [], [], [], []
    for round_ in range(APPEND_ROUNDS):
        if round_ % 2:
            base, ours = await bare.rate(count), await following.rate(count)
        else:
            ours, base = await following.rate(count), await bare.rate(count)
        # What the projections deferred, caught up before the next round (never inside it), as
        # the background catch-up does it: pages of the log folded and written.
        begin = time.perf_counter()
        await on.loops.catch_up(events=10 * count)
        deferred = time.perf_counter() - begin
        ratios.append(ours / base)
        with_deferred.append((count / (count / ours + deferred)) / base)
        rates_on.append(ours)
        rates_off.append(base)
    return {
        "ratio": statistics.median(ratios),
        "with_catch_up": statistics.median(with_deferred),
        "ours": statistics.median(rates_on),
        "base": statistics.median(rates_off),
    }


async def _sqlite_pair(tmp: Path, *, search: bool) -> tuple[Ledger, Ledger]:
    on = Ledger(await SqliteEventStore.open(tmp / "on.db"), ttl=None, follow_log=True)
    off_store = await SqliteEventStore.open(tmp / "off.db")
    if not search:
        # Bench only: the store's search index told it is complete past the log's end, so no
        # append ever indexes (the baseline: no projection at all).
        off_store._writer.connection.execute("UPDATE tl_search_through SET position = ?", (2**62,))
    return on, Ledger(off_store, ttl=None, follow_log=False)


async def bench_appends(count: int, pg: str | None) -> Result:
    per_round = max(200, count // 10)
    row: Result = {
        "name": "derived: one-thought appends with every projection following the log, "
        "SQLite and PostgreSQL",
        "baseline": "the same appends with no projection (marks not following; SQLite's index "
        "told it is complete, as PostgreSQL's); median of "
        f"{APPEND_ROUNDS} interleaved rounds of {per_round} thoughts",
    }
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        # The loop marks alone: both ledgers index for search, one follows the log with marks.
        on, off = await _sqlite_pair(Path(tmp), search=True)
        try:
            marks_only = await _append_cost(on, off, per_round)
        finally:
            await on.aclose()
            await off.aclose()
    with tempfile.TemporaryDirectory() as tmp:
        on, off = await _sqlite_pair(Path(tmp), search=False)
        try:
            found = await _append_cost(on, off, per_round)
        finally:
            await on.aclose()
            await off.aclose()
    row.update(
        sqlite_marks_only_ratio=round(marks_only["ratio"], 3),
        sqlite_marks_only_ratio_with_catch_up=round(marks_only["with_catch_up"], 3),
    )
    row.update(
        sqlite_ratio=round(found["ratio"], 3),
        sqlite_ratio_with_catch_up=round(found["with_catch_up"], 3),
        sqlite_per_s=round(found["ours"]),
        sqlite_base_per_s=round(found["base"]),
    )
    ratios.append(found["ratio"])
    if pg is not None:
        import asyncpg

        from thoughtledger.api import open_store

        schemas = [f"bench_derived_{uuid.uuid4().hex[:8]}" for _ in range(2)]
        dsn = pg.replace("postgresql+asyncpg://", "postgresql://")
        try:
            on = Ledger(await open_store(f"{pg}?schema={schemas[0]}"), ttl=None, follow_log=True)
            off = Ledger(await open_store(f"{pg}?schema={schemas[1]}"), ttl=None, follow_log=False)
            try:
                marks_only = await _append_cost(on, off, per_round)
            finally:
                await on.aclose()
                await off.aclose()
            row.update(postgres_marks_only_ratio=round(marks_only["ratio"], 3))
            on = Ledger(await open_store(f"{pg}?schema={schemas[0]}"), ttl=None, follow_log=True)
            off = Ledger(await open_store(f"{pg}?schema={schemas[1]}"), ttl=None, follow_log=False)
            # Bench only: the index told it is complete past the log's end, as SQLite's above.
            connection = await asyncpg.connect(dsn, server_settings={"search_path": schemas[1]})
            await connection.execute("UPDATE tl_search_through SET position = $1", 2**62)
            await connection.close()
            try:
                found = await _append_cost(on, off, per_round)
            finally:
                await on.aclose()
                await off.aclose()
        finally:
            connection = await asyncpg.connect(dsn)
            for schema in schemas:
                await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            await connection.close()
        row.update(
            postgres_ratio=round(found["ratio"], 3),
            postgres_ratio_with_catch_up=round(found["with_catch_up"], 3),
            postgres_per_s=round(found["ours"]),
            postgres_base_per_s=round(found["base"]),
        )
        ratios.append(found["ratio"])
    else:
        row["postgres_ratio"] = "not measured (no PostgreSQL)"
    # The row's verdict is the worse backend's.
    row.update(ratio=round(min(ratios), 3), target=0.95)
    return row


async def bench_derived(thoughts: int, count: int, pg: str | None) -> list[Result]:
    return [await bench_first_answer(thoughts), await bench_appends(count, pg)]


if __name__ == "__main__":  # pragma: no cover  # tools/bench derived is the way in
    print(asyncio.run(bench_derived(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000, 2000, None)))
