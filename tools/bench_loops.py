"""Benchmark of loop detection on one long session: the state fold, then the fold plus detection.

Usage:
    tools/bench loops [--loop-thoughts N]

The session's thoughts are 20-60 words drawn from a small vocabulary, every tenth one an earlier
thought again with other case and punctuation. Detection is not part of the state fold (recording
a thought never pays for it); a reader that shows loops runs it after the fold. Two rows, each
ours over its baseline:

* the fold alone (``replay`` of the events, in memory) against the fold then ``find_repeats``;
* what ``show`` reads, a session's state from an SQLite file (``Ledger.state``), against the
  same read then ``find_repeats``;
* ``stats`` over a generated ledger (``tools/bench_stats.py``'s, 100k events, 20k with
  ``--quick``): the SQL figures alone against the SQL figures plus ``ledger.stats.loops()``
  (the default, counted from the stored loop marks), and against the SQL figures plus the
  fold of every thought (``loops_folded``, what ``stats --loops`` cost before the marks were
  stored); the time the marks take to catch up over the whole log (an upgraded ledger's, in
  the background after its opening) beside it;
* the append rate with the loop marks following the log (``Ledger.think``, one thought per
  append, SQLite) against the same ledger not following it, in alternating rounds (target
  >= 0.95; the marks are folded after appends pause, never in an append).
"""

import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from thoughtledger.api.service import Ledger
from thoughtledger.ledger.events import SessionStarted, ThoughtRecorded
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.store.sqlite import SqliteEventStore
from thoughtledger.projections.loops import LOOP_WINDOW, find_repeats
from thoughtledger.projections.state import empty, replay

Result = dict[str, Any]
_WORDS = [f"word{n}" for n in range(400)]


def _texts(count: int, seed: int = 25) -> list[str]:
    chosen = random.Random(seed)
    texts: list[str] = []
    for number in range(count):
        if number % 10 == 9 and texts:
            earlier = texts[max(0, len(texts) - chosen.randrange(1, LOOP_WINDOW)) :][0]
            texts.append(earlier.upper() + "!")
        else:
            texts.append(" ".join(chosen.choices(_WORDS, k=chosen.randrange(20, 61))))
    return texts


async def _fill(store: LedgerStore, texts: list[str]) -> None:
    thoughts = len(texts)
    await store.append("long", [SessionStarted()], expected_version=0)
    for start in range(0, thoughts, 1000):
        batch = [
            ThoughtRecorded(
                thought=text,
                thought_number=start + offset + 1,
                total_thoughts=thoughts,
                next_thought_needed=True,
            )
            for offset, text in enumerate(texts[start : start + 1000])
        ]
        await store.append("long", batch, expected_version=start + 1)


async def _stats_rows(events: int) -> list[Result]:
    from bench_stats import generate_ledger

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stats.db"
        await generate_ledger(path, events)
        # The generator writes rows behind the store's back: every event lies after the marks'
        # position, as in an upgraded ledger; time the catch-up an opening runs in the background.
        store = await SqliteEventStore.open(path)
        ledger = Ledger(store, follow_log=False)
        try:
            begin = time.perf_counter()
            marked = await ledger.mark_loops()
            fill = time.perf_counter() - begin
            sql, both, folded, alone = [], [], [], []
            for _ in range(3):
                begin = time.perf_counter()
                await ledger.stats.loops()
                alone.append(time.perf_counter() - begin)
                begin = time.perf_counter()
                await ledger.stats.summarize()
                sql.append(time.perf_counter() - begin)
                begin = time.perf_counter()
                await ledger.stats.summarize()
                loops = await ledger.stats.loops()
                both.append(time.perf_counter() - begin)
            begin = time.perf_counter()
            await ledger.stats.summarize()
            by_folding = await ledger.stats.loops_folded()
            folded.append(time.perf_counter() - begin)
            assert by_folding == loops, (by_folding, loops)  # the marks count what the fold does
        finally:
            await ledger.aclose()
    scope = f"{events:,} events ({loops.sessions:,} sessions, {loops.repeats:,} repeats)"
    return [
        {
            "name": f"loops: stats with loops (the default, from the marks) over {scope}",
            "ours_s": round(min(both), 3),
            "baseline": "stats' SQL figures alone (ledger.stats.summarize), same run",
            "baseline_s": round(min(sql), 3),
            "ratio": round(min(both) / min(sql), 3),
            "loops_alone_s": round(min(alone), 4),
        },
        {
            "name": f"loops: stats with loops folded from every thought over {scope}",
            "ours_s": round(min(folded), 3),
            "baseline": "stats' SQL figures alone (ledger.stats.summarize), same run",
            "baseline_s": round(min(sql), 3),
            "ratio": round(min(folded) / min(sql), 3),
            "marking_every_session_s": round(fill, 3),
            "events_taken_in": marked,
        },
    ]


async def _think_rate(
    ledger: Ledger, texts: list[str], sessions: int, *, caught_up: bool = False
) -> float:
    """Thoughts recorded per second, one per append, round-robin over ``sessions`` sessions.

    ``caught_up``: the time includes bringing the loop marks up to the log's end after the
    appends (the work a following ledger defers, paid in the same round).
    """
    ids = [f"rate-{uuid.uuid4().hex[:8]}-{n}" for n in range(sessions)]
    start = time.perf_counter()
    for number, text in enumerate(texts):
        await ledger.think(
            ids[number % sessions],
            {
                "thought": text,
                "thought_number": number // sessions + 1,
                "total_thoughts": len(texts),
                "next_thought_needed": True,
            },
        )
    if caught_up:
        await ledger.mark_loops()
    return len(texts) / (time.perf_counter() - start)


async def _append_row(count: int, sessions: int = 10, rounds: int = 25) -> Result:
    texts = _texts(count, seed=3)
    with tempfile.TemporaryDirectory() as tmp:
        marked = Ledger(await SqliteEventStore.open(Path(tmp) / "marked.db"), ttl=None)
        bare = Ledger(
            await SqliteEventStore.open(Path(tmp) / "bare.db"), ttl=None, follow_log=False
        )
        try:
            await _think_rate(marked, texts[:500], sessions)
            await _think_rate(bare, texts[:500], sessions)
            with_marks: list[float] = []
            without: list[float] = []
            for _ in range(rounds):  # alternating short rounds, best of each: load comes in bursts
                with_marks.append(await _think_rate(marked, texts, sessions, caught_up=True))
                without.append(await _think_rate(bare, texts, sessions))
        finally:
            await marked.aclose()
            await bare.aclose()
    ours, base = max(with_marks), max(without)
    return {
        "name": f"loops: thoughts recorded with loop marks (SQLite, 1 thought/append, "
        f"{sessions} sessions, every 10th a repeat)",
        "ours_per_s": round(ours),
        "baseline": "the same ledger not following the log (marks left to readers), "
        "alternating rounds; ours includes catching the marks up after its round",
        "baseline_per_s": round(base),
        "ratio": round(ours / base, 3),
        "target": 0.9,
    }


async def bench_loops(thoughts: int = 100_000) -> list[Result]:
    """Time the fold, and the read ``show`` does, of a ``thoughts``-long session, then detection."""
    texts = _texts(thoughts)
    store = MemoryEventStore()
    await _fill(store, texts)
    records = await store.read_stream("long")
    await store.aclose()

    def fold() -> float:
        begin = time.perf_counter()
        replay(records, empty("long"))
        return time.perf_counter() - begin

    def fold_and_detect() -> tuple[float, int]:
        begin = time.perf_counter()
        state = replay(records, empty("long"))
        found = len(find_repeats(state.thoughts))
        return time.perf_counter() - begin, found

    baseline = min(fold() for _ in range(3))
    runs = [fold_and_detect() for _ in range(3)]
    ours = min(seconds for seconds, _ in runs)
    found = runs[0][1]
    assert found >= thoughts // 10 - 1, found  # every planted repeat is found
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = await SqliteEventStore.open(Path(tmp) / "loops.db")
        await _fill(sqlite, texts)
        read, read_and_detect = [], []
        for _ in range(3):
            ledger = Ledger(sqlite)  # a fresh ledger each time: no cached state
            begin = time.perf_counter()
            state = await ledger.state("long")
            read.append(time.perf_counter() - begin)
            ledger = Ledger(sqlite)
            begin = time.perf_counter()
            state = await ledger.state("long")
            find_repeats(state.thoughts)
            read_and_detect.append(time.perf_counter() - begin)
        await sqlite.aclose()
    stats_rows = await _stats_rows(thoughts)
    append_row = await _append_row(1000)
    return [
        *stats_rows,
        append_row,
        {
            "name": f"loops: show's read (SQLite) + detection, one session of {thoughts:,}",
            "ours_s": round(min(read_and_detect), 3),
            "baseline": "the same session's state read from SQLite alone (Ledger.state)",
            "baseline_s": round(min(read), 3),
            "ratio": round(min(read_and_detect) / min(read), 3),
        },
        {
            "name": f"loops: fold + detection of one session of {thoughts:,} thoughts",
            "ours_s": round(ours, 3),
            "baseline": "the same session's state fold (replay) alone",
            "baseline_s": round(baseline, 3),
            "repeats_found": found,
            "detection_us_per_thought": round((ours - baseline) / thoughts * 1e6, 1),
            "ratio": round(ours / baseline, 3),
        },
    ]
