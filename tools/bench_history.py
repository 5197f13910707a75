"""Paged ``thinking_history`` on a huge session: page latency and the server's memory.

Builds a session of ``--thoughts`` thoughts (default 1,000,000) in a SQLite ledger through the
store's batch path (10,000 events an append), and a 100-thought session beside it; and a copy of
the huge session followed by :data:`REDACTIONS` ``thought.redacted`` events whose texts were never
stripped (a redaction cut short after its events), one naming the first thought. Then serves the
ledger with ``thoughtledger serve`` on stdio and measures:

* the latency of a served ``thinking_history`` page (100 thoughts) at the start, the middle and
  the end of the huge session, and at the start and the middle of the redacted copy, against
  reading the whole 100-thought session (the baseline, the same answer size, in the same run);
* the server's RSS growth while reading pages: from after the first (warm-up) call until after
  every page was read, including a walk of consecutive pages following ``nextCursor``.

Usage: tools/bench history [--history-thoughts N]   (or: .venv/bin/python tools/bench_history.py)
"""

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mcp import call, ours, spawned

from tests.support.lines import LineClient
from thoughtledger.ledger.events import (
    LedgerEvent,
    SessionStarted,
    ThoughtRecorded,
    ThoughtRedacted,
)
from thoughtledger.ledger.store.base import MAX_BATCH
from thoughtledger.ledger.store.sqlite import SqliteEventStore
from thoughtledger.projections.paging import HistoryCursor

Result = dict[str, Any]
RSS_BUDGET_MB = 50.0
"""How much the server may grow while reading pages of the huge session."""

REDACTIONS = 100
"""``thought.redacted`` events at the end of the redacted copy (every n-th thought's)."""

_SAMPLES = 15
_WALK = 200


def _thought(n: int, total: int) -> ThoughtRecorded:
    return ThoughtRecorded(
        thought=f"Thought {n}: weigh the options and note what changed since the last step.",
        thought_number=n,
        total_thoughts=total,
        next_thought_needed=True,
    )


async def _record(store: SqliteEventStore, session_id: str, thoughts: int) -> None:
    version = 0
    batch: list[LedgerEvent] = [SessionStarted(metadata={"agent": "bench"})]
    for n in range(1, thoughts + 1):
        batch.append(_thought(n, thoughts))
        if len(batch) == MAX_BATCH or n == thoughts:
            await store.append(session_id, batch, expected_version=version)
            version += len(batch)
            batch = []


async def _mark_redacted(store: SqliteEventStore, session_id: str, thoughts: int) -> None:
    """Append the redaction events of every n-th thought, as if the strip never ran."""
    step = max(thoughts // REDACTIONS, 1)
    named = [
        record
        for version in range(2, thoughts + 2, step)
        for record in await store.read_stream(
            session_id, after_version=version - 1, to_version=version
        )
    ]
    redactions: list[LedgerEvent] = [
        ThoughtRedacted(
            event_id=str(record.event_id),
            version=record.version,
            thought_number=record.version - 1,
            by="bench",
            reason="benchmark",
        )
        for record in named
    ]
    await store.append(session_id, redactions, expected_version=thoughts + 1)


async def build(path: Path, thoughts: int) -> float:
    """Record the huge session and the baseline one; return the seconds the huge one took."""
    store = await SqliteEventStore.open(path)
    try:
        start = time.perf_counter()
        await _record(store, "huge", thoughts)
        took = time.perf_counter() - start
        await _record(store, "marked", thoughts)
        await _mark_redacted(store, "marked", thoughts)
        short: list[LedgerEvent] = [SessionStarted(metadata={})]
        short += [_thought(n, 100) for n in range(1, 101)]
        await store.append("short", short, expected_version=0)
    finally:
        await store.aclose()
    return took


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc (Linux only)")


async def _timed(client: LineClient, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    line = await call(client, "thinking_history", arguments)
    elapsed = (time.perf_counter() - start) * 1000
    answer: dict[str, Any] = json.loads(line)["result"]["structuredContent"]
    return elapsed, answer


async def bench_history(thoughts: int = 1_000_000) -> list[Result]:
    """Build, serve and measure (see the module docstring); return rows like ``tools/bench``'s."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "history.db"
        built = await build(db, thoughts)
        version = thoughts + 1
        where = {
            "start": None,
            "middle": HistoryCursor("huge", version // 2).encode(),
            "end": HistoryCursor("huge", version - 100).encode(),
        }
        marked = {
            "start": None,
            "middle": HistoryCursor("marked", version // 2).encode(),
        }
        async with spawned(ours(db)) as client:
            pid = client.process.pid
            await _timed(client, {"sessionId": "short"})  # warm-up: imports, caches, page cache
            await _timed(client, {"sessionId": "huge"})
            rss_before = _rss_mb(pid)
            samples: dict[str, list[float]] = {
                name: [] for name in ("baseline", *where, *(f"redacted {n}" for n in marked))
            }
            shown = 0
            for _ in range(_SAMPLES):
                # In turn, so that every figure sees the same machine at the same moment.
                samples["baseline"].append((await _timed(client, {"sessionId": "short"}))[0])
                for name, cursor in where.items():
                    arguments: dict[str, Any] = {"sessionId": "huge"}
                    if cursor is not None:
                        arguments["after"] = cursor
                    elapsed, answer = await _timed(client, arguments)
                    assert len(answer["history"]) == 100, answer.get("more")
                    samples[name].append(elapsed)
                for name, cursor in marked.items():
                    arguments = {"sessionId": "marked"}
                    if cursor is not None:
                        arguments["after"] = cursor
                    elapsed, answer = await _timed(client, arguments)
                    assert len(answer["history"]) == 100, answer.get("more")
                    samples[f"redacted {name}"].append(elapsed)
                    if name == "start":
                        shown = sum(1 for item in answer["history"] if item.get("redacted"))
            walked, cursor = 0, where["middle"]
            while walked < _WALK:
                _elapsed, answer = await _timed(client, {"sessionId": "huge", "after": cursor})
                cursor = answer["nextCursor"]
                walked += 1
            rss_after = _rss_mb(pid)
    baseline = statistics.median(samples["baseline"])
    growth = rss_after - rss_before
    rows: list[Result] = [
        {
            "name": f"thinking_history page of 100 at the {name} of a {thoughts:,}-thought "
            "session (SQLite, served on stdio)",
            "ours_p50_ms": round(statistics.median(samples[name]), 3),
            "baseline": "thinking_history of a whole 100-thought session, same server",
            "baseline_p50_ms": round(baseline, 3),
            "ratio": round(statistics.median(samples[name]) / baseline, 3),
            "target": None,
            "lower_is_better": True,
        }
        for name in where
    ]
    rows += [
        {
            "name": f"thinking_history page of 100 at the {name} of the {thoughts:,}-thought "
            f"session followed by {REDACTIONS} unstripped thought.redacted events (SQLite, "
            "served on stdio)",
            "ours_p50_ms": round(statistics.median(samples[f"redacted {name}"]), 3),
            "baseline": "thinking_history of a whole 100-thought session, same server",
            "baseline_p50_ms": round(baseline, 3),
            "ratio": round(statistics.median(samples[f"redacted {name}"]) / baseline, 3),
            "target": None,
            "lower_is_better": True,
            **({"redacted_items_shown": shown} if name == "start" else {}),
        }
        for name in marked
    ]
    rows.append(
        {
            "name": f"server RSS growth over {_SAMPLES * 6 + _WALK} history pages of the "
            f"{thoughts:,}-thought session",
            "ours_mb": round(growth, 1),
            "rss_before_mb": round(rss_before, 1),
            "rss_after_mb": round(rss_after, 1),
            "baseline": f"the budget, +{RSS_BUDGET_MB:g} MB",
            "baseline_mb": RSS_BUDGET_MB,
            "ratio": round(growth / RSS_BUDGET_MB, 3),
            "target": 1.0,
            "lower_is_better": True,
            "build_seconds": round(built, 1),
        }
    )
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/bench_history.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--thoughts", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    rows = asyncio.run(bench_history(args.thoughts))
    for row in rows:
        figures = {k: v for k, v in row.items() if k not in ("name", "baseline")}
        print(f"{row['name']}\n  vs {row['baseline']}: {json.dumps(figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
