"""Paged ``thinking_history`` on a huge session: page latency and the server's memory.

Builds a session of ``--thoughts`` thoughts (default 1,000,000) in a SQLite ledger as a user's
program writes one, through the public API (``open_ledger``, then ``Session.think_batch`` of
1,000 thoughts at a time: one append each, with the search index and the loop marks kept as
for any recording), and a 100-thought session beside it; and a copy of the huge session followed
by :data:`REDACTIONS` ``thought.redacted`` events whose texts were never stripped, one naming the
first thought: a redaction cut short after its first step (``Ledger.append_redactions``, what
``ledger.redaction.redact`` appends before it strips the texts), its loop marks then brought up
to date (``Ledger.mark_loops``; a writable ledger also does it in the background). Then serves the
ledger with ``thoughtledger serve`` on stdio and measures:

* the latency of a served ``thinking_history`` page (100 thoughts) at the start, the middle and
  the end of the huge session, and at the start and the middle of the redacted copy, against
  reading the whole 100-thought session (the baseline, the same answer size, in the same run);
* the first page of each session, as the server's first read of it (``first_page_cold_ms``: it
  loads the session), kept out of the samples;
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
from thoughtledger.api import MAX_BATCH_THOUGHTS, Ledger, open_ledger
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import ThoughtRecorded, ThoughtRedacted
from thoughtledger.projections.paging import HistoryCursor

Result = dict[str, Any]
RSS_BUDGET_MB = 50.0
"""How much the server may grow while reading pages of the huge session."""

REDACTIONS = 100
"""``thought.redacted`` events at the end of the redacted copy (every n-th thought's)."""

COLD_WAIT = 600.0
"""Seconds any one exchange may take: the first page of a cold huge session folds it."""

_SAMPLES = 15
_WALK = 200


def _thoughts(first: int, last: int, total: int) -> list[dict[str, Any]]:
    return [
        {
            "thought": f"Thought {n}: weigh the options and note what changed since the last step.",
            "thought_number": n,
            "total_thoughts": total,
            "next_thought_needed": True,
        }
        for n in range(first, last + 1)
    ]


async def _record(ledger: Ledger, session_id: str, thoughts: int) -> list[RecordedEvent]:
    """Record the session a batch at a time; return its thought events, in order."""
    session = ledger.session(session_id, metadata={"agent": "bench"})
    recorded: list[RecordedEvent] = []
    for first in range(1, thoughts + 1, MAX_BATCH_THOUGHTS):
        last = min(first + MAX_BATCH_THOUGHTS - 1, thoughts)
        for outcome in await session.think_batch(_thoughts(first, last, thoughts)):
            recorded += [r for r in outcome.recorded if isinstance(r.event, ThoughtRecorded)]
    assert session.id == session_id, "the session expired while it was recorded"
    return recorded


async def _mark_redacted(ledger: Ledger, session_id: str, thoughts: list[RecordedEvent]) -> None:
    """Record the redaction of every n-th thought, as if the strip that follows never ran."""
    step = max(len(thoughts) // REDACTIONS, 1)
    redactions = [
        ThoughtRedacted(
            event_id=str(record.event_id),
            version=record.version,
            thought_number=event.thought_number,
            by="bench",
            reason="benchmark",
        )
        for record in thoughts[::step]
        if isinstance(event := record.event, ThoughtRecorded)
    ]
    await ledger.append_redactions(session_id, redactions, expected_version=thoughts[-1].version)


async def build(path: Path, thoughts: int) -> float:
    """Record the huge session and the baseline one; return the seconds the huge one took."""
    async with open_ledger(f"sqlite:///{path}") as ledger:
        start = time.perf_counter()
        await _record(ledger, "huge", thoughts)
        took = time.perf_counter() - start
        await _mark_redacted(ledger, "marked", await _record(ledger, "marked", thoughts))
        await _record(ledger, "short", 100)
        # The redaction events list the session as behind on its loop marks; the next opening
        # for writing marks it (a fold of the whole session) before anything else, as redact()
        # does after its strip. Done here, the served figures are of a ledger at rest.
        await ledger.mark_loops()
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
        async with spawned(ours(db), wait=COLD_WAIT) as client:
            pid = client.process.pid
            # Warm-up: imports, caches, page cache. The first page of a session the server has
            # not read yet is a figure of its own (the cold page), kept apart from the samples.
            cold = {
                session: (await _timed(client, {"sessionId": session}))[0]
                for session in ("short", "huge", "marked")
            }
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
            cursor = where["middle"]
            for _ in range(_WALK):
                # Consecutive pages from the middle; past the end (a small session), the start.
                walk: dict[str, Any] = {"sessionId": "huge"}
                if cursor is not None:
                    walk["after"] = cursor
                _elapsed, answer = await _timed(client, walk)
                cursor = answer.get("nextCursor")
            rss_after = _rss_mb(pid)
    baseline = statistics.median(samples["baseline"])
    growth = rss_after - rss_before
    rows: list[Result] = [
        {
            "name": f"thinking_history page of 100 at the {name} of a {thoughts:,}-thought "
            "session (SQLite, served on stdio)",
            "ours_p50_ms": round(statistics.median(samples[name]), 3),
            **({"first_page_cold_ms": round(cold["huge"], 1)} if name == "start" else {}),
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
            **(
                {"redacted_items_shown": shown, "first_page_cold_ms": round(cold["marked"], 1)}
                if name == "start"
                else {}
            ),
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
