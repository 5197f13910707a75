"""What a thought costs on disk: SQLite bytes per thought against its input, and WAL pages a commit.

Usage: tools/bench storage [--storage-thoughts N] [--pg URL]
       (or: .venv/bin/python tools/bench_storage.py [N] [R])

Builds a ledger the way users write one: ``N`` thoughts (default 20,000) in sessions of ``R``
(default 10) of 36 words each, as JSON Lines piped into ``thoughtledger record`` (the same lines as
``tools/bench scale``). Rows:

* file size per thought against the input line (the thought's JSON with its session id), the
  search index and loop marks included (both taken in, the WAL checkpointed first); target
  <= 1.6. The row also names the tables and indexes holding the bytes (SQLite's ``dbstat``),
  per thought;
* with ``--pg URL`` (``tools/bench storage``), the same for PostgreSQL: its tables' bytes
  (indexes and TOAST included, after ``VACUUM``) per thought against the input line, a figure;
* WAL pages written per single-event commit at durability=full, one writer appending one event
  a call to one session (as the peers row does), beside eventsourcing's SQLite recorder appending
  the same payloads (its table and statement through sqlite3 when the library is not installed);
  target <= 3 (the ratio is the pages themselves).
"""

import asyncio
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

Result = dict[str, Any]

SIZE_TARGET = 1.6
"""The most SQLite bytes per byte of input line a thought may take."""
WAL_TARGET = 3.0
"""The most WAL pages a single-event commit may write."""
COMMITS = 200
"""Single-event commits counted (few enough that no automatic checkpoint runs among them)."""
TOP = 8
"""How many of the largest tables and indexes the size row names."""


def _settled_size(db: Path) -> int:
    """The file's size once the WAL is copied in and truncated (what stays on disk)."""
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db.stat().st_size


def _breakdown(db: Path, thoughts: int) -> dict[str, float]:
    """Bytes per thought of each table and index (with their free space), largest first."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        rows = connection.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    return {name: round(size / thoughts, 1) for name, size in rows}


def _wal_frames(db: Path) -> int:
    """Frames now in ``db``'s WAL (a passive checkpoint copies them but leaves them counted)."""
    with sqlite3.connect(db) as connection:
        return int(connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])


def _reset_wal(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


async def _our_pages(db: Path, commits: int) -> float:
    """WAL pages per commit of ``commits`` single-event appends to one session of ``db``."""
    from bench_peers import _events

    from thoughtledger.ledger.store.sqlite import SqliteEventStore

    events = _events(commits)
    store = await SqliteEventStore.open(db, durability="full")
    try:
        await store.append("storage-bench", events[:1], expected_version=0)
        _reset_wal(db)
        for version, event in enumerate(events[1:], start=1):
            await store.append("storage-bench", [event], expected_version=version)
        return _wal_frames(db) / (commits - 1)
    finally:
        await store.aclose()


RECORDER_TABLE = (
    "CREATE TABLE IF NOT EXISTS stored_events (originator_id TEXT, originator_version INTEGER, "
    "topic TEXT, state BLOB, PRIMARY KEY (originator_id, originator_version)) WITHOUT ROWID"
)
"""eventsourcing's SQLite aggregate recorder's table, as its ``create_table`` makes it."""


def _their_pages(db: Path, commits: int) -> tuple[float, str]:
    """The same for eventsourcing's SQLite recorder; its table and statement when not installed."""
    import uuid

    from bench_peers import _events, _stored

    try:
        from eventsourcing.sqlite import SQLiteAggregateRecorder, SQLiteDatastore
    except ImportError:
        # The recorder is one WAL-mode table and one INSERT per transaction (SQLite's default
        # synchronous=FULL): the same through sqlite3 writes the same pages.
        events = _events(commits)
        originator = uuid.uuid4().hex
        connection = sqlite3.connect(db, isolation_level=None)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(RECORDER_TABLE)
        rows = [
            (originator, n, "thoughtledger:ThoughtRecorded", event.model_dump_json().encode())
            for n, event in enumerate(events, start=1)
        ]
        insert = "INSERT INTO stored_events VALUES (?, ?, ?, ?)"
        connection.execute(insert, rows[0])
        _reset_wal(db)
        for row in rows[1:]:
            connection.execute("BEGIN")
            connection.execute(insert, row)
            connection.execute("COMMIT")
        connection.close()
        return _wal_frames(db) / (commits - 1), "its table and INSERT through sqlite3"
    datastore = SQLiteDatastore(str(db))
    recorder = SQLiteAggregateRecorder(datastore)
    recorder.create_table()
    stored = _stored(uuid.uuid4(), _events(commits))
    recorder.insert_events(stored[:1])
    _reset_wal(db)
    for item in stored[1:]:
        recorder.insert_events([item])
    frames = _wal_frames(db)
    datastore.close()
    return frames / (commits - 1), "SQLiteAggregateRecorder.insert_events, one per call"


_PG_SIZES = (
    "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 2 DESC"
)


async def _postgres_row(pg: str, thoughts: int, run: int) -> Result:
    """The same ledger recorded into a fresh PostgreSQL schema: its tables' bytes per thought."""
    import uuid

    import asyncpg
    from bench_tenfold_build import build

    schema = f"bench_storage_{uuid.uuid4().hex[:8]}"
    _big, _seconds, written = await asyncio.to_thread(
        build, f"{pg}?schema={schema}", thoughts, thoughts // run + 1, 0
    )
    connection = await asyncpg.connect(pg.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await connection.execute(f"VACUUM ANALYZE {schema}.tl_events")
        sizes = {name: size for name, size in await connection.fetch(_PG_SIZES, schema)}
    finally:
        await connection.execute(f"DROP SCHEMA {schema} CASCADE")
        await connection.close()
    per_thought = sum(sizes.values()) / thoughts
    return {
        "name": f"storage: PostgreSQL bytes per thought vs its input line ({thoughts:,} thoughts "
        f"recorded, sessions of {run}; tables with their indexes and TOAST, after VACUUM)",
        "bytes_per_thought": round(per_thought),
        "input_line_bytes": round(written / thoughts),
        "baseline": "the thought's JSON line with its session id, as `record` reads it",
        "largest": ", ".join(f"{name} {size / thoughts:.1f}" for name, size in sizes.items()),
        "ratio": round(per_thought / (written / thoughts), 2),
    }


async def bench_storage(
    thoughts: int = 20_000, run: int = 10, pg: str | None = None
) -> list[Result]:
    """Build the ledger with ``record`` and measure its bytes and its commits' WAL pages.

    With ``pg`` (a PostgreSQL URL) the same ledger is also recorded there and measured.
    """
    from bench_tenfold_build import build

    sessions = thoughts // run
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "storage.db"
        # build() gives one session to its long one: none here, so one more of the others.
        _big, _seconds, written = await asyncio.to_thread(build, str(db), thoughts, sessions + 1, 0)
        size = _settled_size(db)
        parts = _breakdown(db, thoughts)
        per_line = written / thoughts
        per_thought = size / thoughts
        rows: list[Result] = [
            {
                "name": f"storage: SQLite bytes per thought vs its input line ({thoughts:,} "
                f"thoughts recorded, sessions of {run}, search index and loop marks included)",
                "bytes_per_thought": round(per_thought),
                "input_line_bytes": round(per_line),
                "baseline": "the thought's JSON line with its session id, as `record` reads it",
                "largest": ", ".join(f"{name} {size}" for name, size in list(parts.items())[:TOP]),
                "ratio": round(per_thought / per_line, 2),
                "target": SIZE_TARGET,
                "lower_is_better": True,
            }
        ]
        ours = await _our_pages(db, COMMITS)
        theirs, how = _their_pages(folder / "es.db", COMMITS)
        rows.append(
            {
                "name": "storage: WAL pages per single-event commit, durability=full, one writer",
                "pages_per_commit": round(ours, 2),
                "baseline": f"eventsourcing's SQLite recorder ({how})",
                "baseline_pages_per_commit": round(theirs, 2),
                "ratio": round(ours, 2),
                "target": WAL_TARGET,
                "lower_is_better": True,
            }
        )
    if pg is not None:
        rows.append(await _postgres_row(pg, thoughts, run))
    return rows


async def _main() -> None:
    thoughts, run = [int(arg) for arg in sys.argv[1:3]] + [20_000, 10][len(sys.argv[1:3]) :]
    for row in await bench_storage(thoughts, run):
        print(row)


if __name__ == "__main__":
    asyncio.run(_main())
