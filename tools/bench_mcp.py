"""MCP benchmarks: our stdio server against a bare MCP SDK echo server, measured in the same run.

Usage:
    python tools/bench_mcp.py [--calls N] [--json FILE]
    python tools/bench_mcp.py --echo-server      (the baseline server itself, on stdio)

Both servers are spawned the same way (a Python subprocess speaking JSON-RPC on its stdin and
stdout) and driven by the same bare line client, alternating call for call, so drift of the
machine lands on both. Rows:

* stdio round-trip p50/p99 of ``sequentialthinking`` (validate, append to SQLite, answer) against
  an echo tool returning the same text; ``ratio`` is ours / baseline at p50 (lower is better;
  target 1.15). A second row runs our server on the SDK's own stdio transport: the difference
  is what the pipe transport saves, the rest is the cost of recording a thought;
* total response bytes of a scripted 20-thought session, per ``--profile``, against ``official``;
* the size of ``tools/list`` for the default tools and for all tools, with the official
  descriptions and with ``--descriptions compact`` (bytes, and about 4 bytes a token), and the
  default list against the official server's (measured live when ``THOUGHTLEDGER_OFFICIAL_SERVER``
  names its ``dist/index.js`` and node runs, else its recorded figure; target 1.5).
"""

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.lines import LineClient  # noqa: E402  # the stdio tests' client, on the path just set
from tests.support.mcp import (  # noqa: E402  # the tests' one measure of a list, and its budget
    OFFICIAL_TOOLS_LIST_BYTES,
    TOOLS_LIST_BUDGET,
    listed_bytes,
)

Result = dict[str, Any]
WAIT = 30.0  # seconds: bounds every exchange, start-up included

PROFILES = ("minimal", "official", "full")


async def call(client: LineClient, tool: str, arguments: dict[str, Any]) -> bytes:
    """Call a tool; return the response line, raw (its size is a figure).

    A result without ``isError`` is a success: the MCP specification defaults it to false, and
    the official server (2026.8.31) leaves it out of its successful answers.

    Raises:
        RuntimeError: The server answered with a JSON-RPC error or a tool error.
    """
    line = await client.request_line("tools/call", {"name": tool, "arguments": arguments})
    message = json.loads(line)
    if "result" not in message:
        raise RuntimeError(f"{tool} answered with an error: {line[:300]!r}")
    if message["result"].get("isError", False) is not False:
        raise RuntimeError(f"{tool} answered with a tool error: {line[:300]!r}")
    return line


@asynccontextmanager
async def spawned(
    command: list[str], *, wait: float = WAIT, **extra_env: str
) -> AsyncIterator[LineClient]:
    """Start a server on stdio and open its MCP session; each exchange bounded by ``wait`` s."""
    env = {**os.environ, "DISABLE_THOUGHT_LOGGING": "true", **extra_env}
    # The servers' own log lines would bury the figures; a failure still shows as an error here.
    process = await anyio.open_process(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        client = LineClient(process, wait=wait)
        await client.handshake("bench")
        yield client
    finally:
        assert process.stdin is not None
        await process.stdin.aclose()  # EOF: both servers stop on their own
        with anyio.move_on_after(WAIT):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


def ours(db: Path, *options: str) -> list[str]:
    """The command an MCP client runs: ``thoughtledger serve`` (the README's drop-in)."""
    script = Path(sys.executable).parent / "thoughtledger"
    launcher = (
        [str(script)] if script.exists() else [sys.executable, "-m", "thoughtledger.adapters.cli"]
    )
    return [*launcher, "serve", "--db", f"sqlite:///{db}", *options]


def echo_server() -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--echo-server"]


def _text(n: int, chars: int) -> str:
    stem = f"Thought {n}: weigh the options and note what changed since the last step. "
    return (stem * (chars // len(stem) + 1))[:chars]


def _thought(n: int, chars: int, total: int = 20) -> dict[str, Any]:
    return {
        "thought": _text(n, chars),
        "thoughtNumber": n,
        "totalThoughts": max(total, n),
        "nextThoughtNeeded": True,
    }


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def bench_round_trip(calls: int, warmup: int, chars: int) -> list[Result]:
    """Ours (as served), ours on the SDK's stdio transport, and the echo server, interleaved."""
    samples: dict[str, list[float]] = {"ours": [], "ours-sdk-stdio": [], "echo": []}
    with tempfile.TemporaryDirectory() as tmp:
        async with (
            spawned(ours(Path(tmp) / "bench.db")) as mine,
            spawned(ours(Path(tmp) / "sdk.db"), THOUGHTLEDGER_STDIO="sdk") as mine_sdk,
            spawned(echo_server()) as echo,
        ):
            total = calls + warmup
            for n in range(1, total + 1):
                # Call for call in turn, so all three see the same machine at the same moment.
                for name, client, tool, arguments in (
                    ("ours", mine, "sequentialthinking", _thought(n, chars, total=total)),
                    ("ours-sdk-stdio", mine_sdk, "sequentialthinking", _thought(n, chars, total)),
                    ("echo", echo, "echo", {"text": _text(n, chars)}),
                ):
                    start = time.perf_counter()
                    await call(client, tool, arguments)
                    if n > warmup:
                        samples[name].append((time.perf_counter() - start) * 1000)
    base_p50, base_p99 = statistics.median(samples["echo"]), _percentile(samples["echo"], 0.99)
    rows = []
    for name, label, target in (
        ("ours", "as served (pipe transport)", 1.15),
        (
            "ours-sdk-stdio",
            "on the SDK's stdio writer, reads in a worker thread (THOUGHTLEDGER_STDIO=sdk)",
            None,
        ),
    ):
        p50, p99 = statistics.median(samples[name]), _percentile(samples[name], 0.99)
        rows.append(
            {
                "name": f"mcp stdio round-trip, sequentialthinking {label}, {chars}-char thought",
                "ours_p50_ms": round(p50, 3),
                "ours_p99_ms": round(p99, 3),
                "baseline": "bare MCP SDK server (SDK stdio), echo tool, same spawn and client",
                "baseline_p50_ms": round(base_p50, 3),
                "baseline_p99_ms": round(base_p99, 3),
                "ratio": round(p50 / base_p50, 3),
                "ratio_p99": round(p99 / base_p99, 3),
                "target": target,
                "lower_is_better": True,
            }
        )
    return rows


def _session_script(chars: int) -> list[dict[str, Any]]:
    """20 thoughts: a revision, a two-thought branch, a second branch, an ending."""
    script = [_thought(n, chars) for n in range(1, 21)]
    script[4].update(isRevision=True, revisesThought=3)
    script[9].update(branchFromThought=8, branchId="alt")
    script[10].update(branchFromThought=8, branchId="alt")
    script[14].update(branchFromThought=12, branchId="other")
    script[19]["nextThoughtNeeded"] = False
    return script


async def bench_response_bytes(chars: int) -> list[Result]:
    totals: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for profile in PROFILES:
            async with spawned(ours(Path(tmp) / f"{profile}.db", "--profile", profile)) as client:
                lines = [
                    await call(client, "sequentialthinking", arguments)
                    for arguments in _session_script(chars)
                ]
            totals[profile] = sum(len(line) for line in lines)
    return [
        {
            "name": f"response bytes, 20 thoughts of {chars} chars, --profile {profile}",
            "ours_bytes": totals[profile],
            "baseline": "--profile official",
            "baseline_bytes": totals["official"],
            "ratio": round(totals[profile] / totals["official"], 3),
            "target": None,
        }
        for profile in PROFILES
    ]


async def bench_tools_list() -> list[Result]:
    """The ``tools/list`` answer's size per tool set and description style.

    ``compact`` rows compare with ``official`` for the same tools; ``official`` rows with the
    default tools. ``longest_description`` is what OpenAI's 1,024-character limit applies to.
    """
    rows = []
    sizes: dict[tuple[str, str], int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, options in (("default tools", ()), ("all tools", ("--tools", "all"))):
            for style in ("official", "compact"):
                served = ours(Path(tmp) / "tools.db", *options, "--descriptions", style)
                async with spawned(served) as client:
                    line = await client.request_line("tools/list")
                result = json.loads(line)["result"]
                size = listed_bytes(result)
                sizes[label, style] = size
                descriptions = [tool.get("description", "") for tool in result["tools"]]
                compact = style == "compact"
                baseline = (label, "official") if compact else ("default tools", "official")
                rows.append(
                    {
                        "name": f"tools/list size, {label} ({len(result['tools'])} tools), "
                        f"--descriptions {style}",
                        "ours_bytes": size,
                        "approx_tokens": round(size / 4),
                        "description_chars": sum(len(text) for text in descriptions),
                        "longest_description": max(len(text) for text in descriptions),
                        "baseline": "the same tools, --descriptions official"
                        if compact
                        else "the default tools, --descriptions official",
                        "baseline_bytes": sizes[baseline],
                        "ratio": round(size / sizes[baseline], 3),
                        "target": None,
                    }
                )
    official, measured = await _official_tools_list()
    rows.append(
        {
            "name": "tools/list size, default tools, against the official server's",
            "ours_bytes": sizes["default tools", "official"],
            "baseline": "@modelcontextprotocol/server-sequential-thinking's tools/list"
            + (" (measured now)" if measured else " (2026.8.31, recorded)"),
            "baseline_bytes": official,
            "ratio": round(sizes["default tools", "official"] / official, 3),
            "target": TOOLS_LIST_BUDGET,
            "lower_is_better": True,
        }
    )
    return rows


async def _official_tools_list() -> tuple[int, bool]:
    """The official server's ``tools/list`` size, and whether it was measured now."""
    node = shutil.which("node")
    script = os.environ.get("THOUGHTLEDGER_OFFICIAL_SERVER")  # as tools/bench_peers.py reads it
    if not node or not script or not Path(script).exists():  # noqa: ASYNC240  # once, at start
        return OFFICIAL_TOOLS_LIST_BYTES, False
    async with spawned([node, script]) as client:
        line = await client.request_line("tools/list")
    return listed_bytes(json.loads(line)["result"]), True


async def bench_mcp(calls: int = 500, warmup: int = 50, thought_chars: int = 200) -> list[Result]:
    """Run every MCP benchmark; return rows like ``tools/bench.py``'s (see the module docstring)."""
    rows = await bench_round_trip(calls, warmup, thought_chars)
    rows += await bench_response_bytes(thought_chars)
    rows += await bench_tools_list()
    return rows


def _print(rows: list[Result]) -> None:
    for row in rows:
        figures = {k: v for k, v in row.items() if k not in ("name", "baseline")}
        print(f"{row['name']}\n  vs {row['baseline']}: {json.dumps(figures)}")
    latency = rows[0]
    verdict = "ok" if latency["ratio"] <= latency["target"] else "ABOVE TARGET"
    print(f"round-trip ratio {latency['ratio']} (target <= {latency['target']}): {verdict}")


def run_echo_server() -> None:
    """The baseline: the SDK's own server with one echo tool, nothing else, on stdio."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("echo")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    server.run()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tools/bench_mcp.py", description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--thought-chars", type=int, default=200)
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.echo_server:
        run_echo_server()
        return 0
    rows = asyncio.run(bench_mcp(args.calls, args.warmup, args.thought_chars))
    _print(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
