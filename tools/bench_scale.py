"""Scale benches: memory of one server over many thoughts, and start-up to the first answer.

Usage: python tools/bench_scale.py memory | startup | initialize | cli
"""

import json
import os
import shutil
import statistics
import subprocess
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

from tests.support.lines import initialize

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


BARE_SDK_SERVER = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("echo")
@server.tool()
async def echo(text: str) -> str:
    return text
server.run()
"""
"""The SDK's own server with one tool and nothing else: the least a Python MCP server loads."""


async def _initialize_ms(command: list[str]) -> tuple[float, float]:
    """Wall time from spawn to the answer to ``initialize``, and the CPU the server spent."""
    start = time.perf_counter()
    process = await anyio.open_process(command, stderr=subprocess.DEVNULL)
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        await process.stdin.send(json.dumps(initialize("bench")).encode() + b"\n")
        answer = b""
        with anyio.fail_after(30):
            while not answer.endswith(b"\n"):
                answer += await process.stdout.receive()
        elapsed = (time.perf_counter() - start) * 1000
        if b'"result"' not in answer:
            raise RuntimeError(f"initialize failed: {answer[:300]!r}")
        return elapsed, _cpu_ms(process.pid)
    finally:
        await process.stdin.aclose()
        with anyio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


def _official_server() -> dict[str, list[str]]:
    """The official Node server's command, when node runs and its ``dist/index.js`` is named."""
    node = shutil.which("node")
    official = os.environ.get("THOUGHTLEDGER_OFFICIAL_SERVER")
    if node and official and Path(official).exists():
        return {"official": [node, official]}
    print("(official server skipped: set THOUGHTLEDGER_OFFICIAL_SERVER, see tools/bench peers)")
    return {}


async def bench_initialize(runs: int = 11) -> Result:
    """Spawn to answered ``initialize``: ours beside the bare SDK and the official Node server.

    Each run starts every server back to back (bare Python too), so the machine's drift lands on
    all of them; the row's ratio is the median of ours minus the bare SDK's, run by run (target:
    at most 100 ms). The official server runs when node does and ``THOUGHTLEDGER_OFFICIAL_SERVER``
    names its ``dist/index.js`` (as for ``tools/bench peers``).
    """
    servers: dict[str, list[str]] = {
        # Bare Python: read the request, answer a line (what any process costs to start).
        "python": [
            sys.executable,
            "-c",
            "import sys; sys.stdin.readline(); print('\"result\"', flush=True); sys.stdin.read()",
        ],
        "sdk": [sys.executable, "-c", BARE_SDK_SERVER],
    }
    servers.update(_official_server())
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in (*servers, "ours")}
    with tempfile.TemporaryDirectory() as tmp:
        command = our_server(Path(tmp) / "startup.db")
        await _first_answer_ms(command, "sequentialthinking", _thought(1, 200, 3))  # the ledger
        for _run in range(runs):
            times["ours"].append(await _initialize_ms(command))
            for name, other in servers.items():
                times[name].append(await _initialize_ms(other))
    # Run by run, as bench_startup: wall time swings by hundreds of ms on a shared machine, the
    # CPU time each process used (10 ms resolution) is the steadier figure.
    mid = runs // 2
    pairs = list(zip(times["ours"], times["sdk"], strict=True))
    gaps = sorted(ours[0] - sdk[0] for ours, sdk in pairs)
    cpu_gaps = sorted(ours[1] - sdk[1] for ours, sdk in pairs)
    p50 = {name: round(sorted(s[0] for s in samples)[mid], 1) for name, samples in times.items()}
    return {
        "name": "start-up: spawn to answered initialize (ms over the bare MCP SDK server)",
        "ours_ms_p50": p50["ours"],
        "bare_sdk_ms_p50": p50["sdk"],
        "bare_python_ms_p50": p50["python"],
        "official_node_ms_p50": p50.get("official"),
        "wall_gaps_ms": [round(gap) for gap in gaps],
        "cpu_gap_ms_p50": round(cpu_gaps[mid]),
        "ratio": round(gaps[mid], 1),
        "target": 100,
        "lower_is_better": True,
        "baseline": "bare MCP SDK server with one echo tool, same spawn, same run",
    }


READING_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("sessions",),
    ("show", "SESSION"),
    ("stats",),
    ("search", "latency"),
    ("verify", "--all"),
    ("doctor",),
)
"""The reading commands timed on the demo's ledger (``SESSION``: the demo's session)."""


def _wall_ms(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)  # noqa: S603  # our own commands
    return (time.perf_counter() - start) * 1000


def bench_cli_startup(runs: int = 7) -> Result:
    """Each reading command on the demo's ledger, start to exit, beside bare Python's start.

    The command is started as users start it (``python -m thoughtledger``); each round times
    bare ``python -c pass`` and every command back to back, and the figures are medians.
    """
    python = [sys.executable, "-c", "pass"]
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "demo.db")
        made = subprocess.run(  # noqa: S603  # our own command
            [sys.executable, "-m", "thoughtledger", "demo", "--db", db, "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        session = json.loads(made.stdout)["sessionId"]
        commands = {
            " ".join(words): [
                sys.executable,
                "-m",
                "thoughtledger",
                *(session if word == "SESSION" else word for word in words),
                *([] if words == ("--help",) else ["--db", db]),
            ]
            for words in READING_COMMANDS
        }
        times: dict[str, list[float]] = {name: [] for name in ("python", *commands)}
        for _run in range(runs):
            times["python"].append(_wall_ms(python))
            for name, command in commands.items():
                times[name].append(_wall_ms(command))
    p50 = {name: round(statistics.median(samples)) for name, samples in times.items()}
    slowest = max(commands, key=lambda name: p50[name])
    return {
        "name": "start-up: reading commands on the demo's ledger, start to exit (ms, p50)",
        "commands_ms_p50": {name: p50[name] for name in commands},
        "bare_python_ms_p50": p50["python"],
        "slowest": slowest,
        "ratio": p50[slowest],
        "target": 250,
        "lower_is_better": True,
        "baseline": "python -c pass, same rounds",
    }


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "startup"
    if which == "memory":
        print(anyio.run(bench_memory, int(sys.argv[2]) if len(sys.argv) > 2 else 100_000))
    elif which == "cli":
        print(bench_cli_startup())
    elif which == "initialize":
        print(anyio.run(bench_initialize))
    else:
        print(anyio.run(bench_startup))
