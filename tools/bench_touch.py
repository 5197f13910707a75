"""Other clients' latency while a huge session is touched for the first time.

Builds a session of ``--touch-thoughts`` thoughts (default 200,000) in a SQLite ledger through the
public API (``Session.think_batch``, 1,000 thoughts a call, as ``tools/bench history`` builds its
own), opens the ledger cold (nothing held in memory) and runs :data:`CLIENTS`
clients on the same event loop, each recording a thought in its own small session every
:data:`INTERVAL`, as a server's other clients do; each call's latency counts from when it was due.
It measures them twice in the same run:

* **baseline**: for :data:`BASELINE_SECONDS`, with nothing else going on;
* **touched**: while the huge session is first appended to (``think``: its head is loaded), or
  first read whole (``state``: every thought folded), until that call returns.

The row is the clients' p99 while touched against the baseline's, and whether it stays within
:data:`P99_BUDGET_MS`.

Usage: tools/bench touch [--touch-thoughts N]   (or: .venv/bin/python tools/bench_touch.py)
"""

import asyncio
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_history import _record

from thoughtledger import Ledger, open_ledger

Result = dict[str, Any]
CLIENTS = 4
INTERVAL = 0.01
"""Seconds between the calls each client means to make (100 a second)."""
BASELINE_SECONDS = 3.0
WARM_UP_SECONDS = 1.0
P99_BUDGET_MS = 50.0
"""Other clients' p99 while a huge session is first touched."""


def _p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100)[98] if len(samples) >= 2 else samples[0]


async def _client(ledger: Ledger, name: str, latencies: list[float], stop: asyncio.Event) -> None:
    """One call due every :data:`INTERVAL`; each call's latency counts from when it was due.

    Counting from the call's own start would hide a stall: a client blocked for seconds issues
    one late call, not the hundreds it meant to (coordinated omission).
    """
    loop = asyncio.get_running_loop()
    number = 0
    due = loop.time()
    while not stop.is_set():
        number += 1
        due += INTERVAL
        if (wait := due - loop.time()) > 0:
            await asyncio.sleep(wait)
        thought = {
            "thought": f"{name} step {number}",
            "thought_number": number,
            "total_thoughts": number,
            "next_thought_needed": True,
        }
        await ledger.think(name, thought)
        latencies.append((loop.time() - due) * 1000)


async def _touch(ledger: Ledger, how: str, thoughts: int) -> None:
    if how == "think":
        thought = {
            "thought": "one more",
            "thought_number": thoughts + 1,
            "total_thoughts": thoughts + 1,
            "next_thought_needed": True,
        }
        await ledger.think("huge", thought)
    else:
        state = await ledger.state("huge")
        assert len(state.thoughts) >= thoughts


async def _measure(db: Path, how: str, thoughts: int) -> tuple[list[float], list[float], float]:
    """The clients' latencies without and with the touch, and how long the touch took."""
    gc.collect()  # nothing left over from the previous round to collect meanwhile
    async with open_ledger(f"sqlite:///{db}", ttl=None) as ledger:
        warm_up: list[float] = []
        baseline: list[float] = []
        touched: list[float] = []
        for samples, seconds in ((warm_up, WARM_UP_SECONDS), (baseline, BASELINE_SECONDS)):
            stop = asyncio.Event()
            clients = [
                asyncio.create_task(_client(ledger, f"client-{n}", samples, stop))
                for n in range(CLIENTS)
            ]
            await asyncio.sleep(seconds)
            stop.set()
            await asyncio.gather(*clients)
        stop = asyncio.Event()
        clients = [
            asyncio.create_task(_client(ledger, f"client-{n}", touched, stop))
            for n in range(CLIENTS)
        ]
        await asyncio.sleep(0.1)  # the clients are running when the touch begins
        start = time.perf_counter()
        await _touch(ledger, how, thoughts)
        took = time.perf_counter() - start
        stop.set()
        await asyncio.gather(*clients)
    return baseline, touched, took


async def bench_touch(thoughts: int = 200_000) -> list[Result]:
    """Build, then measure each kind of first touch (see the module docstring)."""
    rows: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "touch.db"
        async with open_ledger(f"sqlite:///{db}") as ledger:
            await _record(ledger, "huge", thoughts)
        for how, what in (("think", "first append to"), ("state", "first whole read of")):
            baseline, touched, took = await _measure(db, how, thoughts)
            ours, base = _p99(touched), _p99(baseline)
            within = "yes" if ours <= P99_BUDGET_MS else "NO"
            rows.append(
                {
                    "name": f"other clients' think p99 during the {what} a {thoughts:,}-thought "
                    f"session ({CLIENTS} clients, one SQLite ledger, one event loop)",
                    "ours_p99_ms": round(ours, 2),
                    "ours_max_ms": round(max(touched), 2),
                    "calls": len(touched),
                    "touch_s": round(took, 2),
                    "baseline": f"the same clients for {BASELINE_SECONDS:g} s with no touch, "
                    "same ledger, same run",
                    "baseline_p99_ms": round(base, 2),
                    "ratio": round(ours / base, 2),
                    "target": None,
                    "within_budget_ms": f"{P99_BUDGET_MS:g}: {within}",
                    "lower_is_better": True,
                }
            )
    return rows


if __name__ == "__main__":
    for row in asyncio.run(bench_touch(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)):
        print(row)
