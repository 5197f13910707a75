"""Paged ``thinking_history`` on a huge session: page latency and the server's memory.

Builds a session of ``--thoughts`` thoughts (default 1,000,000) in a SQLite ledger through the
store's batch path (10,000 events an append), and a 100-thought session beside it. Then serves the
ledger with ``thoughtledger serve`` on stdio and measures:

* the latency of a served ``thinking_history`` page (100 thoughts) at the start, the middle and
  the end of the huge session, against reading the whole 100-thought session (the baseline, the
  same answer size, in the same run);
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

from ledger.events import LedgerEvent, SessionStarted, ThoughtRecorded
from ledger.store.base import MAX_BATCH
from ledger.store.sqlite import SqliteEventStore
from projections.paging import HistoryCursor
from tests.support.lines import LineClient

Result = dict[str, Any]
RSS_BUDGET_MB = 50.0
"""How much the server may grow while reading pages of the huge session."""

_SAMPLES = 15
_WALK = 200


def _thought(n: int, total: int) -> ThoughtRecorded:
    return ThoughtRecorded(
        thought=f"Thought {n}: weigh the options and note what changed since the last step.",
        thought_number=n,
        total_thoughts=total,
        next_thought_needed=True,
    )


async def build(path: Path, thoughts: int) -> float:
    """Record the huge session and the baseline one; return the seconds the huge one took."""
    store = await SqliteEventStore.open(path)
    try:
        start = time.perf_counter()
        version = 0
        batch: list[LedgerEvent] = [SessionStarted(metadata={"agent": "bench"})]
        for n in range(1, thoughts + 1):
            batch.append(_thought(n, thoughts))
            if len(batch) == MAX_BATCH or n == thoughts:
                await store.append("huge", batch, expected_version=version)
                version += len(batch)
                batch = []
        took = time.perf_counter() - start
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
        async with spawned(ours(db)) as client:
            pid = client.process.pid
            await _timed(client, {"sessionId": "short"})  # warm-up: imports, caches, page cache
            await _timed(client, {"sessionId": "huge"})
            rss_before = _rss_mb(pid)
            samples: dict[str, list[float]] = {name: [] for name in ("baseline", *where)}
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
    rows.append(
        {
            "name": f"server RSS growth over {_SAMPLES * 4 + _WALK} history pages of the "
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
