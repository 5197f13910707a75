"""The ``forks`` rows of tools/bench: comparing a fork with its source; listing a source's forks.

* **Compare**: ``ledger.lineage.compare`` of a fork made halfway through an N-thought source
  (20,000 by default) that then gained N/2 thoughts of its own, on a ledger opened afresh (nothing
  held), against reading the source's state whole the same way (``ledger.state``). A comparison
  folds the source once and the fork once (whose first half is the source's), so the target is a
  ratio of at most 2.
* **Forks listed for a principal**: ``ledger.lineage.forks`` for a reader who owns one fork of
  1,000 (the last), which reads each fork's first event to learn its owner, against the store's
  indexed look-up of the forks alone (``ledger.forks``). No target: it shows what a scoped
  listing costs per fork.
"""

import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from thoughtledger.api import Principal, open_ledger

Result = dict[str, Any]
FORKS = 1_000


def _thought(number: int, total: int, text: str) -> dict[str, Any]:
    return {
        "thought": f"{text} {number}",
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": True,
    }


async def _best(url: str, work: Callable[[Any], Awaitable[object]], rounds: int = 5) -> float:
    """The best time of ``work`` over ``rounds`` ledgers opened afresh (opening not timed)."""
    times = []
    for _ in range(rounds):
        async with open_ledger(url, ttl=None, read_only=True) as opened:
            started = time.perf_counter()
            await work(opened)
            times.append(time.perf_counter() - started)
    return min(times)


async def bench_forks(thoughts: int) -> list[Result]:
    """The two rows (see the module's docstring)."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'forks.db'}"
        async with open_ledger(url, ttl=None) as ledger:
            source = (await ledger.think(None, _thought(1, thoughts, "source"))).session_id
            for n in range(2, thoughts // 2 + 1):
                await ledger.think(source, _thought(n, thoughts, "source"))
            fork = (await ledger.fork(source)).id
            for n in range(thoughts // 2 + 1, thoughts + 1):
                await ledger.think(source, _thought(n, thoughts, "source"))
                await ledger.think(fork, _thought(n, thoughts, "fork"))
            listed = await ledger.think(None, _thought(1, 1, "lister"), owner="alice")
            lister = listed.session_id
            for n in range(FORKS):
                await ledger.fork(lister, owner="alice" if n == FORKS - 1 else None)

        folded = await _best(url, lambda opened: opened.state(source))
        compared = await _best(url, lambda opened: opened.lineage.compare(fork))
        alice = Principal("alice", "reader")
        indexed = await _best(url, lambda opened: opened.forks(lister))
        scoped = await _best(url, lambda opened: opened.lineage.forks(lister, principal=alice))
    return [
        {
            "name": f"forks: compare a fork halfway through {thoughts:,} thoughts with its source",
            "ratio": round(compared / folded, 2),
            "target": 2.0,
            "lower_is_better": True,
            "compare_s": round(compared, 3),
            "baseline": f"the source folded whole, {folded:.3f} s",
        },
        {
            "name": f"forks: the forks a reader may read, among {FORKS:,}",
            "ratio": round(scoped / indexed, 2),
            "listing_s": round(scoped, 4),
            "per_fork_ms": round(1000 * (scoped - indexed) / FORKS, 3),
            "baseline": f"the indexed look-up of every fork, {indexed:.4f} s",
        },
    ]


__all__ = ["bench_forks"]
