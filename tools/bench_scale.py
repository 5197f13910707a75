"""Scale benches: memory of one server over many thoughts, and start-up to the first answer.

Usage: tools/bench memory | startup
"""

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_mcp import _thought, call, echo_server, spawned
from bench_mcp import ours as our_server

Result = dict[str, Any]


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def bench_memory(total: int = 100_000, first: int = 1_000) -> Result:
    """RSS of one stdio server after ``first`` and after ``total`` thoughts in one session."""
    with tempfile.TemporaryDirectory() as tmp:
        async with spawned(our_server(Path(tmp) / "memory.db")) as client:
            marks: dict[int, int] = {}
            start = time.perf_counter()
            for n in range(1, total + 1):
                await call(client, "sequentialthinking", _thought(n, 200, total))
                if n in (first, total) or n % 10_000 == 0:
                    marks[n] = _rss_kib(client.process.pid)
            elapsed = time.perf_counter() - start
    growth = (marks[total] - marks[first]) / 1024
    return {
        "name": (
            f"memory: one stdio server, {total:,} thoughts in one session "
            f"(MiB over its size at {first:,})"
        ),
        "rss_mib_by_thought": {n: round(k / 1024, 1) for n, k in sorted(marks.items())},
        "thoughts_per_s": round(total / elapsed),
        "ratio": round(growth, 1),
        "target": 20,
        "lower_is_better": True,
        "baseline": f"its own RSS after {first:,} thoughts",
    }


def _cpu_ms(pid: int) -> float:
    """CPU time (user + system) a process has used so far, from /proc (10 ms resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def _first_answer_ms(
    command: list[str], tool: str, arguments: dict[str, Any]
) -> tuple[float, float]:
    """Wall time from spawn to the first answered call, and the CPU time the server spent."""
    start = time.perf_counter()
    async with spawned(command) as client:
        await client.request("tools/call", {"name": tool, "arguments": arguments})
        wall = (time.perf_counter() - start) * 1000
        return wall, _cpu_ms(client.process.pid)


async def bench_startup(runs: int = 11) -> Result:
    """Spawn to first answered tools/call: ours against a bare MCP SDK echo server."""
    ours: list[tuple[float, float]] = []
    echo: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        # A client spawns the server on the ledger it already has; the very first start also
        # creates the schema, which costs more (it is the one path that imports SQLAlchemy).
        command = our_server(Path(tmp) / "startup.db")
        first_ms, _cpu = await _first_answer_ms(command, "sequentialthinking", _thought(1, 200, 3))
        for _run in range(runs):
            ours.append(await _first_answer_ms(command, "sequentialthinking", _thought(1, 200, 3)))
            echo.append(await _first_answer_ms(echo_server(), "echo", {"text": "hi"}))
    # Each run starts both servers back to back: the median of those differences follows the
    # machine's drift better than the difference of two medians. Wall time on this shared
    # machine swings by hundreds of ms; the CPU time each server used is the steadier figure.
    mid = runs // 2
    gaps = sorted(o[0] - e[0] for o, e in zip(ours, echo, strict=True))
    cpu_gaps = sorted(o[1] - e[1] for o, e in zip(ours, echo, strict=True))
    return {
        "name": "start-up: spawn to first answered tools/call (ms over a bare SDK echo server)",
        "ours_ms_p50": round(sorted(o[0] for o in ours)[mid], 1),
        "ours_first_start_ms": round(first_ms, 1),
        "baseline_ms_p50": round(sorted(e[0] for e in echo)[mid], 1),
        "wall_gaps_ms": [round(gap) for gap in gaps],
        "cpu_gap_ms_p50": round(cpu_gaps[mid]),
        "ratio": round(gaps[mid], 1),
        "target": 150,
        "lower_is_better": True,
        "baseline": "bare MCP SDK server with one echo tool, same spawn and client",
    }


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "startup"
    if which == "memory":
        print(anyio.run(bench_memory, int(sys.argv[2]) if len(sys.argv) > 2 else 100_000))
    else:
        print(anyio.run(bench_startup))
