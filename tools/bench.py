"""thoughtledger benchmarks: every figure is a ratio against a baseline measured in the same run.

Usage:
    tools/bench append [--events N] [--pg URL]
    tools/bench history [--history-thoughts N]
    tools/bench touch [--touch-thoughts N]
    tools/bench ui [--quick]     (Chromium at /usr/bin/chromium, playwright from the dev extra)
    tools/bench subscribe [--pg URL]
    tools/bench standby          (a private primary and hot standby; PostgreSQL binaries)
    tools/bench proofs [--replay-events N] [--events N]
    tools/bench otlp [--otlp-thoughts N]   (export --all --otlp: spans/s, peak RSS growth)
    tools/bench redaction [--redaction-events N]
    tools/bench loops [--loop-thoughts N]
    tools/bench search [--search-thoughts N]
    tools/bench forks [--fork-thoughts N]
    tools/bench batch [--pg URL]   (a batch of 100 thoughts against 100 single calls)
    tools/bench search-append [--events N] [--pg URL]   (the search index's append cost only)
    tools/bench derived [--derived-thoughts N] [--events N] [--pg URL]   (first answer, appends)
    tools/bench all [--quick] [--json FILE]
"""

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import (
    DEFAULT_PG,
    DURABILITY,
    Result,
    bench_append_postgres,
    bench_append_sqlite,
    bench_asof,
    bench_concurrent,
    bench_pg_concurrent,
    bench_replay,
    pg_available,
)


def _verdict(row: Result) -> str:
    target, ratio = row.get("target"), row.get("ratio")
    if target is None or ratio is None:
        return "info"
    met = ratio <= target if row.get("lower_is_better") else ratio >= target
    return "ok" if met else "MISSED"


def _print(results: list[Result]) -> None:
    print(f"durability: {DURABILITY}")
    for row in results:
        target = row.get("target")
        sign = "<=" if row.get("lower_is_better") else ">="
        goal = f"target {sign} {target}" if target is not None else "no target"
        ratio = row.get("ratio")
        print(f"{row['name']}")
        if ratio is not None:
            print(f"    ratio {ratio}  ({goal})  {_verdict(row)}")
        details = {
            k: v
            for k, v in row.items()
            if k not in ("name", "ratio", "target", "lower_is_better", "baseline")
        }
        print("    " + "  ".join(f"{k}={v}" for k, v in details.items()))
        if "baseline" in row:
            print(f"    baseline: {row['baseline']}")


async def _append(args: argparse.Namespace) -> list[Result]:
    results = [await bench_append_sqlite(args.events)]
    if await pg_available(args.pg):
        results.append(await bench_append_postgres(args.pg, args.events // 2))
        results.append(await bench_pg_concurrent(args.pg))
    else:
        print(f"(PostgreSQL at {args.pg} not reachable: its figures are skipped)")
    return results


async def _mcp(_args: argparse.Namespace) -> list[Result]:
    from bench_mcp import bench_mcp

    return await bench_mcp()


async def _stats(args: argparse.Namespace) -> list[Result]:
    from bench_stats import bench_stats

    return await bench_stats(args.replay_events)


async def _memory(args: argparse.Namespace) -> list[Result]:
    from bench_scale import bench_memory

    return [await bench_memory(args.memory_thoughts)]


async def _startup(_args: argparse.Namespace) -> list[Result]:
    from bench_scale import bench_startup

    return [await bench_startup()]


async def _http_sessions(_args: argparse.Namespace) -> list[Result]:
    from bench_http import bench_http_sessions

    return [await bench_http_sessions()]


async def _subscribe(args: argparse.Namespace) -> list[Result]:
    from bench_subscribe import bench_subscribe

    return await bench_subscribe(args.pg if await pg_available(args.pg) else None)


async def _standby(_args: argparse.Namespace) -> list[Result]:
    from bench_standby import bench_standby

    return await bench_standby()


async def _proofs(args: argparse.Namespace) -> list[Result]:
    from bench_proofs import bench_proofs

    pg = args.pg if await pg_available(args.pg) else None
    return await bench_proofs(args.replay_events, appends=args.events, pg=pg)


async def _otlp(args: argparse.Namespace) -> list[Result]:
    from bench_export import bench_otlp

    return await bench_otlp(args.otlp_thoughts)


async def _redaction(args: argparse.Namespace) -> list[Result]:
    from bench_redaction import bench_redaction

    return await bench_redaction(args.redaction_events)


async def _search(args: argparse.Namespace) -> list[Result]:
    from bench_search import bench_search

    pg = args.pg if await pg_available(args.pg) else None
    return await bench_search(args.search_thoughts, args.events, pg)


async def _search_append(args: argparse.Namespace) -> list[Result]:
    from bench_search import bench_index_cost

    pg = args.pg if await pg_available(args.pg) else None
    return [await bench_index_cost(args.events, pg)]


async def _peers(_args: argparse.Namespace) -> list[Result]:
    from bench_peers import bench_peers

    return await bench_peers()


async def _history(args: argparse.Namespace) -> list[Result]:
    from bench_history import bench_history

    return await bench_history(args.history_thoughts)


async def _touch(args: argparse.Namespace) -> list[Result]:
    from bench_touch import bench_touch

    return await bench_touch(args.touch_thoughts)


async def _ui(args: argparse.Namespace) -> list[Result]:
    from bench_ui import bench_ui

    return await bench_ui(sessions=10_000 if args.quick else 100_000)


async def _loops(args: argparse.Namespace) -> list[Result]:
    from bench_loops import bench_loops

    return await bench_loops(args.loop_thoughts)


async def _forks(args: argparse.Namespace) -> list[Result]:
    from bench_forks import bench_forks

    return await bench_forks(args.fork_thoughts)


async def _batch(args: argparse.Namespace) -> list[Result]:
    from bench_batch import bench_batch

    return await bench_batch(args.pg if await pg_available(args.pg) else None)


async def _derived(args: argparse.Namespace) -> list[Result]:
    from bench_derived import bench_derived

    pg = args.pg if await pg_available(args.pg) else None
    return await bench_derived(args.derived_thoughts, args.events, pg)


async def _one(result: Awaitable[Result]) -> list[Result]:
    return [await result]


BENCHES: dict[str, Callable[[argparse.Namespace], Awaitable[list[Result]]]] = {
    "append": _append,
    "asof": lambda _args: _one(bench_asof()),
    "concurrent": lambda _args: _one(bench_concurrent()),
    "replay": lambda args: _one(bench_replay(args.replay_events)),
    "mcp": _mcp,
    "stats": _stats,
    "memory": _memory,
    "startup": _startup,
    "http-sessions": _http_sessions,
    "subscribe": _subscribe,
    "standby": _standby,
    "proofs": _proofs,
    "otlp": _otlp,
    "redaction": _redaction,
    "search": _search,
    "search-append": _search_append,
    "peers": _peers,
    "history": _history,
    "touch": _touch,
    "ui": _ui,
    "loops": _loops,
    "forks": _forks,
    "batch": _batch,
    "derived": _derived,
}
"""Each bench by name, in the order ``all`` runs them (a new one is one function and one line;
the heavy modules are imported only when their bench runs)."""
PARTS = {"search-append"}
"""Benches that are a part of another (``all`` runs them within it), to run by themselves."""


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tools/bench", description=__doc__.split("\n")[0])
    parser.add_argument("bench", choices=[*BENCHES, "all"], nargs="?", default="all")
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--replay-events", type=int, default=1_000_000)
    parser.add_argument("--memory-thoughts", type=int, default=100_000)
    parser.add_argument("--history-thoughts", type=int, default=1_000_000)
    parser.add_argument("--touch-thoughts", type=int, default=200_000)
    parser.add_argument("--otlp-thoughts", type=int, default=100_000)
    parser.add_argument("--redaction-events", type=int, default=200_000)
    parser.add_argument("--loop-thoughts", type=int, default=100_000)
    parser.add_argument("--search-thoughts", type=int, default=1_000_000)
    parser.add_argument("--fork-thoughts", type=int, default=20_000)
    parser.add_argument("--derived-thoughts", type=int, default=2_000_000)
    parser.add_argument(
        "--quick", action="store_true", help="smaller sizes (100k events, 20k thoughts)"
    )
    parser.add_argument("--pg", default=os.environ.get("THOUGHTLEDGER_TEST_PG_URL", DEFAULT_PG))
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.quick:
        args.replay_events, args.memory_thoughts = 100_000, 20_000
        args.history_thoughts = 100_000
        args.touch_thoughts = 50_000
        args.otlp_thoughts = 20_000
        args.loop_thoughts = 20_000
        args.search_thoughts = 100_000
        args.fork_thoughts = 4_000
        args.derived_thoughts = 200_000
    results: list[Result] = []
    for name, bench in BENCHES.items():
        if args.bench == name or (args.bench == "all" and name not in PARTS):
            results += await bench(args)
    _print(results)
    target = args.json
    if target is None and args.bench == "all":
        target = Path("bench-results") / time.strftime("%Y%m%dT%H%M%SZ.json", time.gmtime())
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        report = {"durability": DURABILITY, "results": results}
        target.write_text(json.dumps(report, indent=2, default=str) + "\n")
        print(f"figures written to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
