"""Ten times the ledger: a year of agents on one machine, each figure beside a raw baseline.

Usage: tools/bench scale [--scale-thoughts N] [--scale-sessions S] [--scale-big B] [--pg URL]
                         [--scale-db PATH]

Builds a ledger of ``N`` thoughts (default 10,000,000) in ``S`` sessions (default 100,000), one
of them ``B`` thoughts long (default 100,000), the way users write one: JSON Lines piped into
``thoughtledger record`` (a file holds at most 100,000 thoughts and a session's run at most
1,000): two ``record`` processes write the other sessions side by side, as agents do, while the
long session grows one run at a time beside them. ``--scale-db PATH`` keeps the SQLite file and
reuses it when it already holds the ledger; ``--scale-pg`` builds on ``--pg URL``'s server
instead, in a fresh database dropped at the end, or with ``--scale-db PATH`` in one named by the
path (``tl_scale_<stem>``), kept and reused as the file is.

Then, each as users meet it, in a process of its own, beside a raw baseline in the same run:

* whole-ledger commands, wall time and the process's peak RSS: ``stats``, ``verify``,
  ``export --all --format parquet`` and ``Ledger.rebuild()``, each against a raw scan of the
  same rows (``SELECT`` + ``json.loads``; for ``verify``, + SHA-256 of each row; for Parquet,
  + pyarrow writing the rows). Target: ≤ 2x the raw time and ≤ +200 MB over the same command's
  peak RSS on a small ledger;
* interactive answers, p50 of several: the browser view's sessions list and a two-word search
  (HTTP to a running ``ui``), a ``B``-thought session's first page (``thinking_history`` on a
  running ``serve``), and ``serve``'s first ``initialize`` after it opens the ledger, beside the
  same ``initialize`` of a bare MCP SDK server. Target: ≤ 200 ms p50 (for ``initialize``:
  above the bare server's).

Every row is printed as soon as it is measured (``tools/bench`` keeps the ones that finish).
"""

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

Result = dict[str, Any]

from bench_tenfold_build import (  # noqa: E402  # after the path above
    as_built_row,
    build,
    built_row,
    launcher,
    pg_database,
)

INTERACTIVE_MS = 200
WHOLE_RATIO = 2.0
WHOLE_RSS_MB = 200
SEARCH = "replica timeout"


def _run_measured(command: list[str]) -> tuple[float, float, str]:
    """Run a command in a fresh process: its wall time, its own peak RSS and its output.

    The command is started by a small process of its own (``rss`` below), whose child it is:
    Linux counts into a child's peak RSS the size of the process it was forked from (exec keeps
    the old memory's high-water mark), and this bench's process is hundreds of MB.

    Raises:
        RuntimeError: The command failed.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as peak:
        start = time.perf_counter()
        process = subprocess.run(  # noqa: S603  # the bench's own commands
            [sys.executable, str(Path(__file__).resolve()), "rss", peak.name, *command],
            capture_output=True,
            check=False,
        )
        elapsed = time.perf_counter() - start
        if process.returncode != 0:
            raise RuntimeError(
                f"{' '.join(command[1:4])}… exited {process.returncode}: "
                f"{process.stderr.decode()[-400:]}"
            )
        kib = int(peak.read())
    return elapsed, round(kib / 1024, 1), process.stdout.decode()


def _rss(out: str, command: list[str]) -> int:
    """Run ``command`` as this small process's child; write its peak RSS (KiB) to ``out``."""
    process = subprocess.Popen(command)  # noqa: S603  # the bench's own commands
    _pid, status, usage = os.wait4(process.pid, 0)
    Path(out).write_text(str(usage.ru_maxrss))  # Linux reports KiB
    return os.waitstatus_to_exitcode(status)


# -- raw baselines: each runs as `python tools/bench_tenfold.py raw KIND DB` ---------------------


def _raw_rows(db: str) -> Iterator[tuple[Any, ...]]:
    import sqlite3

    connection = sqlite3.connect(f"file:{db.removeprefix('sqlite:///')}?mode=ro", uri=True)
    cursor = connection.execute("SELECT position, payload, prev_hash, hash FROM tl_events")
    while rows := cursor.fetchmany(10_000):
        yield from rows


async def _raw_rows_pg(url: str, handle: Any) -> None:
    import asyncpg

    connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        async with connection.transaction():
            cursor = connection.cursor(
                "SELECT position, payload::text, prev_hash, hash FROM tl_events", prefetch=10_000
            )
            batch: list[tuple[Any, ...]] = []
            async for row in cursor:
                batch.append(tuple(row))
                if len(batch) == 10_000:
                    handle(batch)
                    batch = []
            handle(batch)
    finally:
        await connection.close()


def raw(kind: str, db: str, out: str | None = None) -> None:
    """The floor under a whole-ledger command: every row read and decoded, and nothing else."""
    import hashlib

    writer = None
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema([("position", pa.int64()), ("thought", pa.string())])
        writer = pq.ParquetWriter(out or os.devnull, schema)

    def handle(rows: list[tuple[Any, ...]]) -> None:
        decoded = [json.loads(row[1]) for row in rows]
        if kind == "verify":
            for row in rows:
                prev = row[2].hex() if isinstance(row[2], bytes) else row[2]  # binary: step 18
                hashlib.sha256((prev + row[1]).encode()).hexdigest()
        if writer is not None:
            import pyarrow as pa

            thoughts = [str(d.get("thought", d.get("content", ""))) for d in decoded]
            writer.write_table(
                pa.table({"position": [r[0] for r in rows], "thought": thoughts}, schema=schema)
            )

    if db.startswith("postgresql"):
        asyncio.run(_raw_rows_pg(db, handle))
    else:
        batch: list[tuple[Any, ...]] = []
        for row in _raw_rows(db):
            batch.append(row)
            if len(batch) == 10_000:
                handle(batch)
                batch = []
        handle(batch)
    if writer is not None:
        writer.close()


REBUILD = """
import asyncio, sys
from thoughtledger import open_ledger
async def main():
    async with open_ledger(sys.argv[1], read_only=True) as ledger:
        print(len(await ledger.rebuild()))
asyncio.run(main())
"""


def _whole_commands(db: str, tmp: Path) -> dict[str, tuple[list[str], list[str]]]:
    me = [sys.executable, str(Path(__file__).resolve()), "raw"]
    out = str(tmp / "out.parquet")
    return {
        "stats": ([*launcher(), "stats", "--db", db, "--json"], [*me, "scan", db]),
        "verify": ([*launcher(), "verify", "--db", db], [*me, "verify", db]),
        "export --format parquet": (
            [*launcher(), "export", "--all", "--format", "parquet", "-o", out, "--db", db],
            [*me, "parquet", db, out + ".raw"],
        ),
        "Ledger.rebuild()": ([sys.executable, "-c", REBUILD, db], [*me, "scan", db]),
    }


def _overwrite(path: Path) -> None:
    for leftover in (path, Path(str(path) + ".raw")):
        leftover.unlink(missing_ok=True)


def whole_row(name: str, ours: list[str], floor: list[str], small: str, db: str) -> Result:
    """One whole-ledger command beside its raw scan, and its RSS beside a small ledger's."""
    out = Path(ours[ours.index("-o") + 1]) if "-o" in ours else None
    if out is not None:
        _overwrite(out)
    _t, small_rss, _out = _run_measured([part if part != db else small for part in ours])
    if out is not None:
        _overwrite(out)
    ours_s, ours_rss, _out = _run_measured(ours)
    raw_s, raw_rss, _out = _run_measured(floor)
    growth = ours_rss - small_rss
    return {
        "name": f"scale: {name} (x a raw scan of the rows)",
        "ours_s": round(ours_s, 1),
        "baseline_s": round(raw_s, 1),
        "baseline": "raw driver: SELECT every row + json.loads (verify: + SHA-256; "
        "parquet: + pyarrow)",
        "peak_rss_mb": ours_rss,
        "raw_peak_rss_mb": raw_rss,
        "rss_growth_mb": round(growth, 1),
        "rss_target_mb": WHOLE_RSS_MB,
        "ratio": round(ours_s / raw_s, 2),
        "target": WHOLE_RATIO,
        "lower_is_better": True,
        "met_rss": growth <= WHOLE_RSS_MB,
    }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _ui(db: str) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(  # noqa: S603  # the bench's own command
        [*launcher(), "ui", "--db", db, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/"
    try:
        import httpx

        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(base + "api/me", timeout=5)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the ui did not start") from None
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def _p50(samples: list[float]) -> float:
    return round(statistics.median(samples), 1)


def _http_p50(base: str, path: str, params: dict[str, str], runs: int = 15) -> float:
    import httpx

    times = []
    with httpx.Client(base_url=base, timeout=60) as http:
        for _run in range(runs):
            start = time.perf_counter()
            answer = http.get(path, params=params)
            times.append((time.perf_counter() - start) * 1000)
            answer.raise_for_status()
    return _p50(times)


def _raw_sql_p50(db: str, sql: str, args: tuple[Any, ...], runs: int = 15) -> float:
    """The bare query's p50, in ms: SQLite's sqlite3, or asyncpg (``$n`` parameters)."""
    if db.startswith("postgresql"):
        return asyncio.run(_raw_pg_p50(db, sql, args, runs))
    import sqlite3

    connection = sqlite3.connect(f"file:{db.removeprefix('sqlite:///')}?mode=ro", uri=True)
    times = []
    for _run in range(runs):
        start = time.perf_counter()
        connection.execute(sql.replace("$1", "?"), args).fetchall()
        times.append((time.perf_counter() - start) * 1000)
    connection.close()
    return _p50(times)


async def _raw_pg_p50(db: str, sql: str, args: tuple[Any, ...], runs: int) -> float:
    import asyncpg

    connection = await asyncpg.connect(db.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        times = []
        for _run in range(runs):
            start = time.perf_counter()
            await connection.fetch(sql, *args)
            times.append((time.perf_counter() - start) * 1000)
    finally:
        await connection.close()
    return _p50(times)


def _interactive(name: str, ours: float, raw_ms: float, baseline: str) -> Result:
    return {
        "name": f"scale: {name} (ms p50)",
        "ours_ms_p50": ours,
        "baseline_ms_p50": raw_ms,
        "baseline": baseline,
        "ratio": ours,
        "target": INTERACTIVE_MS,
        "lower_is_better": True,
    }


NEWEST_HEADS = (
    "SELECT f.session_id, l.version, l.hash, f.recorded_at, l.recorded_at FROM tl_events f "
    "JOIN tl_events l ON l.session_id = f.session_id AND l.version = (SELECT max(m.version) "
    "FROM tl_events m WHERE m.session_id = f.session_id) WHERE f.version = 1 "
    "ORDER BY f.recorded_at DESC, f.session_id DESC LIMIT 50"
)
"""The newest 50 sessions' heads as a hand-written query reads them from the log (schema 19)."""


def ui_rows(db: str) -> list[Result]:
    """The browser view's sessions list and a two-word search, over HTTP to a running ``ui``."""
    with _ui(db) as base:
        listing = _http_p50(base, "api/sessions", {"limit": "50"})
        found = _http_p50(base, "api/search", {"q": SEARCH, "limit": "20"})
    search = (
        "SELECT rowid FROM tl_search WHERE tl_search MATCH $1 ORDER BY rank LIMIT 20"
        if db.startswith("sqlite")
        else "SELECT t.position FROM plainto_tsquery('simple', $1) AS q(q) JOIN tl_search t "
        "ON t.doc @@ q.q ORDER BY ts_rank(t.doc, q.q) DESC LIMIT 20"
    )
    return [
        _interactive(
            "the browser view's sessions list, first page of 50",
            listing,
            _raw_sql_p50(db, NEWEST_HEADS, ()),
            "raw SQL: the newest 50 sessions' first and last events",
        ),
        _interactive(
            f"search '{SEARCH}' in the browser view, first 20 hits",
            found,
            _raw_sql_p50(db, search, (SEARCH,)),
            "raw SQL: the index's match, best 20 (SQLite: FTS5 by bm25; PostgreSQL: the GIN "
            "match by ts_rank)",
        ),
    ]


async def serve_rows(db: str, big_id: str, big: int) -> list[Result]:
    """``serve``'s first initialize on the big ledger and the long session's first page."""
    from bench_mcp import echo_server, spawned

    command = [*launcher(), "serve", "--db", db, "--tools", "all"]
    firsts: list[float] = []
    bare: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    for _run in range(5):
        start = time.perf_counter()
        async with spawned(command, wait=120) as client:
            firsts.append((time.perf_counter() - start) * 1000)
            for page in range(3):  # the server's first read of the session, then two again
                began = time.perf_counter()
                await client.request(
                    "tools/call",
                    {"name": "thinking_history", "arguments": {"sessionId": big_id, "limit": 100}},
                )
                (warm if page else cold).append((time.perf_counter() - began) * 1000)
        start = time.perf_counter()
        async with spawned(echo_server()):
            bare.append((time.perf_counter() - start) * 1000)
    return [
        {
            "name": "scale: serve's first initialize after opening the big ledger (ms over a bare "
            "SDK server)",
            "ours_ms_p50": _p50(firsts),
            "baseline_ms_p50": _p50(bare),
            "baseline": "bare MCP SDK server with one echo tool, same spawn and client",
            "ratio": round(_p50(firsts) - _p50(bare), 1),
            "target": INTERACTIVE_MS,
            "lower_is_better": True,
        },
        {
            **_interactive(
                f"first page (100 thoughts) of a {big:,}-thought session, thinking_history, "
                "the server's first read of it",
                _p50(cold),
                await asyncio.to_thread(
                    _raw_sql_p50,
                    db,
                    "SELECT payload FROM tl_events WHERE session_id = $1 "
                    "ORDER BY version LIMIT 100",
                    (big_id,),
                ),
                "raw SQL: the session's first 100 rows",
            ),
            "again_ms_p50": _p50(warm),
        },
    ]


async def bench_tenfold(
    thoughts: int = 10_000_000,
    sessions: int = 100_000,
    big: int = 100_000,
    *,
    pg: str | None = None,
    keep: Path | None = None,
    as_built: bool = False,
    resume: bool = False,
) -> AsyncIterator[Result]:
    """Build the ledger, then yield each row as it is measured (the blocking work in threads).

    With ``as_built``, the kept SQLite ledger (``keep``) is measured as it is, unbuilt further;
    with ``resume``, a kept ledger cut short is recorded on to the asked size first.
    """
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        small = f"sqlite:///{tmp / 'small.db'}"
        await asyncio.to_thread(build, small, 2_000, 20, 100)
        async with _maybe_pg(None if as_built else pg, keep) as url:
            db = url or f"sqlite:///{keep or tmp / 'scale.db'}"
            if as_built:
                row, thoughts, big = await asyncio.to_thread(as_built_row, db)
            else:
                row = await asyncio.to_thread(
                    built_row, db, keep, thoughts, sessions, big, resume=resume
                )
            big_id = row.pop("big_id")
            yield row
            for name, (ours, floor) in _whole_commands(db, tmp).items():
                yield await asyncio.to_thread(
                    whole_row, f"{name} over {thoughts:,} thoughts", ours, floor, small, db
                )
            for measured in await asyncio.to_thread(ui_rows, db):
                yield measured
            for measured in await serve_rows(db, big_id, big):
                yield measured


@asynccontextmanager
async def _maybe_pg(pg: str | None, keep: Path | None) -> AsyncIterator[str | None]:
    if pg is None:
        yield None
        return
    async with pg_database(pg, keep) as url:
        yield url


async def _print_all(args: list[str]) -> None:
    thoughts = int(args[0]) if args else 100_000
    async for row in bench_tenfold(thoughts, max(2, thoughts // 100), min(100_000, thoughts // 10)):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "rss":
        sys.exit(_rss(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) > 1 and sys.argv[1] == "raw":
        kind, db = sys.argv[2], sys.argv[3]
        raw(kind, db, sys.argv[4] if len(sys.argv) > 4 else None)
    else:
        asyncio.run(_print_all(sys.argv[1:]))
