"""thoughtledger benchmarks: every figure is a ratio against a baseline measured in the same run.

Usage (each bench by name, or ``all``; options a bench does not read are ignored):
    tools/bench append [--events N] [--pg URL]   appends one event at a time: SQLite, PostgreSQL,
                                                 PostgreSQL from 16 connections, against raw drivers
    tools/bench asof                 a point-in-time read of a 10,000-thought session vs a replay
    tools/bench concurrent           64 agents x 200 thoughts through the API vs raw sqlite3
    tools/bench replay [--replay-events N]       Ledger.rebuild() vs raw SELECT + json.loads
    tools/bench mcp                  MCP stdio round trip, response bytes, tools/list sizes
    tools/bench stats [--replay-events N]        stats over a generated ledger vs a raw scan
    tools/bench memory [--memory-thoughts N]     one server's RSS growth over N thoughts
    tools/bench startup              start-up to the first answered call and to the answered
                                     initialize vs a bare MCP server (and the official one, see
                                     peers); each reading command on the demo vs bare Python
    tools/bench http-sessions        serve --http's memory after many initialize calls, with and
                                     without the per-principal session cap
    tools/bench subscribe [--pg URL]  live subscription latency vs a bare poll or NOTIFY
    tools/bench standby              reading from a hot standby: live latency, read-your-writes,
                                     the primary's appends under readers (a private primary and
                                     standby; PostgreSQL binaries)
    tools/bench proofs [--replay-events N] [--events N] [--pg URL]
                                     inclusion proofs, verifying against a checkpoint, the tree's
                                     cost to appends
    tools/bench otlp [--otlp-thoughts N]         export --all --otlp: spans/s, peak RSS growth
    tools/bench receive [--receive-parts N]      OTLP receiver: reasoning parts/s beside export
    tools/bench redaction [--redaction-events N] verify and decode payload schema 2 vs schema 1
    tools/bench search [--search-thoughts N] [--events N] [--pg URL]
                                     ranked search vs the bare index, and the index's append cost
    tools/bench search-append [--events N] [--pg URL]   the search index's append cost only
    tools/bench storage [--storage-thoughts N] [--pg URL]   bytes per thought recorded vs its
                                     input line (SQLite: which tables hold them; PostgreSQL),
                                     SQLite's WAL pages per commit
    tools/bench peers                eventsourcing's SQLite recorder; the official
                                     sequential-thinking server when THOUGHTLEDGER_OFFICIAL_SERVER
                                     names its dist/index.js (tools/bench installs 2026.8.31)
    tools/bench history [--history-thoughts N]   thinking_history pages of a huge session, served
    tools/bench touch [--touch-thoughts N]       other clients' p99 while a cold session is touched
    tools/bench ui [--quick]         the web UI in headless Chromium (/usr/bin/chromium,
                                     playwright from the dev extra)
    tools/bench loops [--loop-thoughts N]        loop detection's cost to folds, reads, stats and
                                                 appends
    tools/bench forks [--fork-thoughts N]        comparing a fork with its source; a principal's
                                                 listing of a source's forks
    tools/bench batch [--pg URL]     a batch of 100 thoughts vs 100 single calls
    tools/bench derived [--derived-thoughts N] [--events N] [--pg URL]
                                     serve's first answer on a ledger whose loop marks are all
                                     behind vs an empty one; appends with every projection vs none
    tools/bench fairness [--fairness-thoughts N]  another principal's p99 on serve --http and
                                     the ui while one principal does its worst within its rights
    tools/bench scale [--scale-thoughts N] [--scale-sessions S] [--scale-big B] [--scale-db PATH]
                      [--scale-pg] [--scale-as-built] [--scale-resume]
                                     ten times the ledger: 10M thoughts recorded, then stats,
                                     verify, Parquet, rebuild(), the sessions list, search, a
                                     100k-thought session's first page and the first initialize,
                                     each beside a raw baseline (not in ``all``: it builds for half
                                     an hour or more)
    tools/bench all [--quick] [--json FILE] [--row-timeout S]   every bench above but search-append
                                     (search runs it)

Each row is printed as soon as it is measured, with its verdict: ``ok`` (target met), ``MISSED``
(target missed), ``info`` (a figure without a target) or ``FAILED`` (the bench raised, or gave no
row within ``--row-timeout`` seconds: its error in one line; the other benches still run). The
JSON report (``--json FILE``; for ``all`` a file in ``bench-results/`` by default) is rewritten
after every row, so a crash keeps what was measured. A summary lists the missed and failed rows;
the exit status is 1 when a row failed, else 0.
"""

import argparse
import asyncio
import os
import sys
import time
from collections.abc import AsyncGenerator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import (
    DEFAULT_PG,
    Result,
    bench_append_postgres,
    bench_append_sqlite,
    bench_asof,
    bench_concurrent,
    bench_pg_concurrent,
    bench_replay,
    pg_available,
)
from bench_runner import Bench, listed, run


async def _append(args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    yield await bench_append_sqlite(args.events)
    if await pg_available(args.pg):
        yield await bench_append_postgres(args.pg, args.events // 2)
        yield await bench_pg_concurrent(args.pg)
    else:
        print(f"(PostgreSQL at {args.pg} not reachable: its figures are skipped)")


async def _asof(_args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    yield await bench_asof()


async def _concurrent(_args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    yield await bench_concurrent()


async def _replay(args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    yield await bench_replay(args.replay_events)


async def _mcp(_args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    from bench_mcp import bench_response_bytes, bench_round_trip, bench_tools_list

    for row in await bench_round_trip(500, 50, 200):
        yield row
    for row in await bench_response_bytes(200):
        yield row
    for row in await bench_tools_list():
        yield row


async def _stats(args: argparse.Namespace) -> list[Result]:
    from bench_stats import bench_stats

    return await bench_stats(args.replay_events)


async def _memory(args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    from bench_scale import bench_memory

    yield await bench_memory(args.memory_thoughts)


async def _startup(_args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    from bench_scale import bench_cli_startup, bench_initialize, bench_startup

    yield await bench_startup()
    yield await bench_initialize()
    yield await asyncio.to_thread(bench_cli_startup)


async def _http_sessions(_args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    from bench_http import bench_http_sessions

    yield await bench_http_sessions()


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


async def _receive(args: argparse.Namespace) -> list[Result]:
    from bench_receive import bench_receive

    pg = args.pg if await pg_available(args.pg) else None
    return await bench_receive(args.receive_parts, pg)


async def _redaction(args: argparse.Namespace) -> list[Result]:
    from bench_redaction import bench_redaction

    return await bench_redaction(args.redaction_events)


async def _search(args: argparse.Namespace) -> list[Result]:
    from bench_search import bench_search

    pg = args.pg if await pg_available(args.pg) else None
    return await bench_search(args.search_thoughts, args.events, pg)


async def _search_append(args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    from bench_search import bench_index_cost

    pg = args.pg if await pg_available(args.pg) else None
    yield await bench_index_cost(args.events, pg)


async def _storage(args: argparse.Namespace) -> list[Result]:
    from bench_storage import bench_storage

    pg = args.pg if await pg_available(args.pg) else None
    return await bench_storage(args.storage_thoughts, pg=pg)


async def _peers(_args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    from bench_peers import bench_peers, official_server

    for row in await bench_peers():
        yield row
    for row in await official_server():
        yield row


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


async def _batch(args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    from bench_batch import bench_batch_mcp, bench_batch_store

    async for row in bench_batch_store(args.pg if await pg_available(args.pg) else None):
        yield row
    yield await bench_batch_mcp()


async def _fairness(args: argparse.Namespace) -> list[Result]:
    from bench_fairness import bench_fairness

    return await bench_fairness(20_000 if args.quick else args.fairness_thoughts)


async def _scale(args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    from bench_tenfold import bench_tenfold

    pg = args.pg if args.scale_pg else None
    async for row in bench_tenfold(
        args.scale_thoughts,
        args.scale_sessions,
        args.scale_big,
        pg=pg,
        keep=args.scale_db,
        as_built=args.scale_as_built,
        resume=args.scale_resume,
    ):
        yield row


async def _derived(args: argparse.Namespace) -> list[Result]:
    from bench_derived import bench_derived

    pg = args.pg if await pg_available(args.pg) else None
    return await bench_derived(args.derived_thoughts, args.events, pg)


BENCHES: dict[str, Bench] = {
    "append": _append,
    "asof": _asof,
    "concurrent": _concurrent,
    "replay": _replay,
    "mcp": _mcp,
    "stats": listed(_stats),
    "memory": _memory,
    "startup": _startup,
    "http-sessions": _http_sessions,
    "subscribe": listed(_subscribe),
    "standby": listed(_standby),
    "proofs": listed(_proofs),
    "otlp": listed(_otlp),
    "receive": listed(_receive),
    "redaction": listed(_redaction),
    "search": listed(_search),
    "search-append": _search_append,
    "storage": listed(_storage),
    "peers": _peers,
    "history": listed(_history),
    "touch": listed(_touch),
    "ui": listed(_ui),
    "loops": listed(_loops),
    "forks": listed(_forks),
    "batch": _batch,
    "derived": listed(_derived),
    "fairness": listed(_fairness),
    "scale": _scale,
}
"""Each bench by name, in the order ``all`` runs them (a new one is one function and one line;
the heavy modules are imported only when their bench runs)."""
PARTS = {"search-append", "scale"}
"""Benches ``all`` leaves out, to run by themselves: a part of another (``all`` runs it within
it), or one that builds for longer than the rest together (``scale``)."""


def parser() -> argparse.ArgumentParser:
    """The command's options (``tools/bench --help``)."""
    parse = argparse.ArgumentParser(
        prog="tools/bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parse.add_argument("bench", choices=[*BENCHES, "all"], nargs="?", default="all")
    parse.add_argument("--events", type=int, default=5000)
    parse.add_argument("--replay-events", type=int, default=1_000_000)
    parse.add_argument("--memory-thoughts", type=int, default=100_000)
    parse.add_argument("--history-thoughts", type=int, default=1_000_000)
    parse.add_argument("--touch-thoughts", type=int, default=200_000)
    parse.add_argument("--otlp-thoughts", type=int, default=100_000)
    parse.add_argument("--receive-parts", type=int, default=200_000)
    parse.add_argument("--redaction-events", type=int, default=200_000)
    parse.add_argument("--loop-thoughts", type=int, default=100_000)
    parse.add_argument("--search-thoughts", type=int, default=1_000_000)
    parse.add_argument("--storage-thoughts", type=int, default=20_000)
    parse.add_argument("--fork-thoughts", type=int, default=20_000)
    parse.add_argument("--derived-thoughts", type=int, default=2_000_000)
    parse.add_argument("--fairness-thoughts", type=int, default=200_000)
    parse.add_argument("--scale-thoughts", type=int, default=10_000_000)
    parse.add_argument("--scale-sessions", type=int, default=100_000)
    parse.add_argument("--scale-big", type=int, default=100_000)
    parse.add_argument("--scale-db", type=Path, help="keep the scale ledger here and reuse it")
    parse.add_argument("--scale-pg", action="store_true", help="build the scale ledger on --pg")
    parse.add_argument(
        "--scale-as-built",
        action="store_true",
        help="measure the --scale-db ledger as it is (a build cut short), building nothing",
    )
    parse.add_argument(
        "--scale-resume",
        action="store_true",
        help="record a --scale-db ledger cut short on to the asked size, then measure it",
    )
    parse.add_argument(
        "--quick",
        action="store_true",
        help="smaller sizes: 100k replay events and history and search thoughts, 20k memory, "
        "otlp and loop thoughts, 50k touch thoughts, 4k fork thoughts, 10k ui sessions, 20k "
        "fairness thoughts",
    )
    parse.add_argument("--pg", default=os.environ.get("THOUGHTLEDGER_TEST_PG_URL", DEFAULT_PG))
    parse.add_argument(
        "--json", type=Path, help="also write the figures to this JSON file, after every row"
    )
    parse.add_argument(
        "--row-timeout",
        type=float,
        default=3600.0,
        metavar="S",
        help="a bench that gives no row within S seconds fails, and the next one runs "
        "(default 3600)",
    )
    return parse


async def main(argv: list[str]) -> int:
    """Run the benches asked for; 1 when a row failed, else 0."""
    args = parser().parse_args(argv)
    if args.quick:
        args.replay_events, args.memory_thoughts = 100_000, 20_000
        args.history_thoughts = 100_000
        args.touch_thoughts = 50_000
        args.otlp_thoughts = 20_000
        args.receive_parts = 20_000
        args.loop_thoughts = 20_000
        args.search_thoughts = 100_000
        args.fork_thoughts = 4_000
        args.derived_thoughts = 200_000
    chosen = {
        name: bench
        for name, bench in BENCHES.items()
        if args.bench == name or (args.bench == "all" and name not in PARTS)
    }
    target = args.json
    if target is None and args.bench == "all":
        target = Path("bench-results") / time.strftime("%Y%m%dT%H%M%SZ.json", time.gmtime())
    return await run(chosen, args, json_path=target, row_timeout=args.row_timeout)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
