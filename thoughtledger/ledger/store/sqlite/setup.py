"""Opening an SQLite ledger: the writer connection, its PRAGMAs, the schema, the scan engine.

Kept apart from the store's hot path so that a server opening an up-to-date ledger reads one
number and never imports SQLAlchemy; only creating or upgrading a schema, and scans, need it.
"""

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.errors import (
    NotALedgerError,
    SchemaVersionError,
    StoreError,
    StoreUnavailableError,
)
from thoughtledger.ledger.store.base import utc_now
from thoughtledger.ledger.store.columns import views_current
from thoughtledger.ledger.store.sqlite.statements import DATABASE_SCHEMA_VERSION, STATEMENTS

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from thoughtledger.ledger.store import schema_fills

Durability = Literal["normal", "full"]

BUSY_BUDGET_SECONDS = 15.0
"""How long an append waits for another process's write lock before giving up."""


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Return whether ``exc`` means another connection holds the lock (retry later)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in str(exc)


def connect_writer(path: Path) -> tuple[Path, sqlite3.Connection]:
    """Open the writer connection on ``path``, creating the file and its folders privately.

    Raises:
        StoreUnavailableError: The path is a directory, or cannot be created or opened.
    """
    file = path.expanduser()
    try:
        create_private(file)
        if file.is_dir():
            raise StoreUnavailableError(f"{file} is a directory, not a database file")
        writer = sqlite3.connect(
            file, isolation_level=None, check_same_thread=False, cached_statements=64
        )
    except OSError as exc:
        raise StoreUnavailableError(f"cannot create the ledger at {file}: {exc}") from exc
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"cannot open the ledger at {file}: {exc}") from exc
    return file, writer


def create_private(file: Path) -> None:
    """Create the missing folders of ``file`` (mode 0700) and ``file`` itself (0600), if missing.

    Whatever the umask: a ledger holds every thought an agent had, so no other local user may
    read it. SQLite gives the ``-wal`` and ``-shm`` files it creates the database file's mode.
    Folders and files that already exist keep their mode.

    Raises:
        OSError: A folder or the file cannot be created.
    """
    missing: list[Path] = []
    folder = file.parent
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another process made it first: it is not ours to change
        folder.chmod(0o700)  # a umask such as 0o277 would leave it unusable
    try:
        handle = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # an existing database, or a directory that the caller reports
    os.close(handle)
    file.chmod(0o600)  # an empty file is an empty database: SQLite takes it from here


def refuse_foreign(writer: sqlite3.Connection, file: Path) -> None:
    """Refuse a database that holds tables but no ledger, before anything in it is changed.

    A mistyped ``--db`` naming another application's SQLite file would otherwise gain the
    ledger's tables (and WAL mode) without a word. An empty database is a new ledger.

    Raises:
        NotALedgerError: The file is not an SQLite database, or holds tables and no ledger.
        StoreUnavailableError: The file cannot be read.
    """
    try:
        names = [
            name
            for (name,) in writer.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
            ).fetchall()
        ]
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            raise NotALedgerError(f"{file} is not an SQLite database") from exc
        raise StoreUnavailableError(f"cannot open the ledger at {file}: {exc}") from exc
    if "tl_schema" in names:
        return
    foreign = [name for name in names if not name.startswith("sqlite_")]
    if foreign:
        raise NotALedgerError(
            f"{file} is another application's database (tables such as "
            f"{sorted(foreign)[0]!r}, none of a ledger's); nothing was changed. "
            "Give the path of a new file or of an existing ledger"
        )


async def configure(writer: sqlite3.Connection, durability: Durability) -> None:
    """Put the writer in WAL mode with the durability asked for, never waiting inside SQLite.

    Raises:
        NotALedgerError: The file is not an SQLite database.
        StoreUnavailableError: WAL mode cannot be used.
    """
    file = writer.execute("PRAGMA database_list").fetchone()[2]
    try:
        deadline = time.monotonic() + BUSY_BUDGET_SECONDS
        while True:
            try:
                mode = writer.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.01)
        if str(mode).lower() != "wal":
            raise StoreUnavailableError(f"{file} cannot use WAL mode (journal mode is {mode})")
        writer.execute(
            "PRAGMA synchronous = FULL" if durability == "full" else "PRAGMA synchronous = NORMAL"
        )
        # The writer never waits inside SQLite: a busy database is retried from the event loop.
        writer.execute("PRAGMA busy_timeout = 0")
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            raise NotALedgerError(f"{file} is not an SQLite database") from exc
        raise StoreUnavailableError(f"cannot open the ledger at {file}: {exc}") from exc


async def migrate(
    writer: sqlite3.Connection,
    file: Path,
    progress: Callable[[str, int, int], None] | None = None,
) -> None:
    """Bring the schema to this code's version (nothing to do, the common case, costs one read).

    Args:
        writer: The writer connection.
        file: The database file, for messages.
        progress: Told how a step that goes through the whole log goes (see
            :data:`thoughtledger.ledger.store.schema_steps.UpgradeProgress`).

    Raises:
        SchemaVersionError: The database was written by a newer thoughtledger.
        StoreUnavailableError: Another process kept the database locked too long.
        StoreError: A schema step failed; nothing was changed.
    """
    try:
        current = writer.execute(STATEMENTS["schema_version"]).fetchone()[0]
    except sqlite3.OperationalError:
        current = 0  # a new database: no schema table yet
    if current == DATABASE_SCHEMA_VERSION and _views_current(writer):
        return  # the common case, answered without a lock and without SQLAlchemy
    if current > DATABASE_SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{file} has schema version {current}, newer than this thoughtledger "
            f"understands ({DATABASE_SCHEMA_VERSION}); upgrade thoughtledger"
        )
    deadline = time.monotonic() + BUSY_BUDGET_SECONDS
    while True:
        try:
            writer.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise StoreUnavailableError(f"cannot lock {file} to prepare it: {exc}") from exc
            await asyncio.sleep(0.01)
    try:
        _apply_schema_steps(writer, file, progress)
        writer.execute("COMMIT")
    except BaseException as exc:
        writer.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"cannot prepare the ledger schema in {file}: {exc}") from exc
        raise


def _views_current(writer: sqlite3.Connection) -> bool:
    # A field added to the definition of a thought is a column the stored view lacks.
    rows = writer.execute("SELECT name FROM pragma_table_info('tl_thoughts')").fetchall()
    return views_current([name for (name,) in rows])


def _apply_schema_steps(
    writer: sqlite3.Connection, file: Path, progress: Callable[[str, int, int], None] | None
) -> None:
    """Bring the schema up to date inside the caller's write transaction (needs SQLAlchemy)."""
    import sqlalchemy as sa
    from sqlalchemy.dialects import sqlite as sqlite_dialect

    from thoughtledger.ledger.store import schema, schema_fills, schema_steps
    from thoughtledger.ledger.store.sqlite.stats_dialect import SqliteStats

    dialect = sqlite_dialect.dialect(paramstyle="named")

    def sql(statement: Any) -> str:
        return str(statement.compile(dialect=dialect))

    writer.execute(sql(sa.schema.CreateTable(schema.schema_versions, if_not_exists=True)))
    # Re-read under the lock: another process may have migrated since the first look.
    current = writer.execute(STATEMENTS["schema_version"]).fetchone()[0]
    if current > schema.DATABASE_SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{file} has schema version {current}, newer than this thoughtledger "
            f"understands ({schema.DATABASE_SCHEMA_VERSION}); upgrade thoughtledger"
        )
    _upgrade_functions(writer)
    for step in schema_steps.pending_steps(current):
        for ddl in schema_steps.MIGRATIONS[step](SqliteStats().json):
            writer.execute(sql(ddl))
        if step in schema_fills.FILLS and "sqlite" in (fill := schema_fills.FILLS[step]()).backends:
            _fill(writer, fill, sql, progress)
        writer.execute(
            sql(sa.insert(schema.schema_versions)),
            {"version": step, "applied_at": format_time(utc_now())},
        )
    if not _views_current(writer):
        for ddl in schema_steps.refreshed_views(SqliteStats().json):
            writer.execute(sql(ddl))


def _upgrade_functions(writer: sqlite3.Connection) -> None:
    """Give the connection what step 18's fill calls (SQLite before 3.41 has no ``unhex``)."""
    from thoughtledger.ledger.store.stored_forms import hash_bytes, id_bytes

    Stored = str | bytes | int | float | None

    def binary(encode: Callable[[str], bytes | str]) -> Callable[[Stored], Stored]:
        return lambda value: encode(value) if isinstance(value, str) else value

    writer.create_function("tl_hash_bytes", 1, binary(hash_bytes), deterministic=True)
    writer.create_function("tl_id_bytes", 1, binary(id_bytes), deterministic=True)


def _fill(
    writer: sqlite3.Connection,
    fill: "schema_fills.Fill",
    sql: Callable[[Any], str],
    progress: Callable[[str, int, int], None] | None,
) -> None:
    """Write a step's rows derived from the log, batch by batch, in the caller's transaction."""
    from thoughtledger.ledger.store import schema_fills

    total = writer.execute(schema_fills.FILL_COUNT).fetchone()[0]
    size = schema_fills.fill_batch_size(total)
    statement = sql(fill.statement)
    low, done = 0, 0
    if not total:
        progress = None  # a new ledger: nothing to go through, nothing to show
    if progress is not None:
        progress(fill.description, 0, total)
    while done < total:
        end = writer.execute(schema_fills.FILL_BOUNDARY, {"low": low, "skip": size - 1}).fetchone()
        high = schema_fills.LAST_POSITION if end is None else end[0]
        writer.execute(statement, {"low": low, "high": high})
        low, done = high, min(done + size, total)
        if progress is not None:
            progress(fill.description, done, total)
    for ddl in fill.then:
        writer.execute(sql(ddl))


def reader_engine(uri: str) -> "AsyncEngine":
    """Make the async engine scans go through (on first use: importing it costs ~0.3 s).

    Args:
        uri: An SQLite ``file:`` URI (with ``?mode=ro`` or ``?immutable=1`` when read-only);
            connections are made from it directly, since SQLAlchemy's URL would unquote it.
    """
    import aiosqlite
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    # The URL only picks the pool a file database gets; no connection is made from it.
    engine = create_async_engine(
        "sqlite+aiosqlite:///ledger.db", async_creator=lambda: aiosqlite.connect(uri, uri=True)
    )

    @sa.event.listens_for(engine.sync_engine, "connect")
    def _reader_pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout = 5000")
        cursor.execute("PRAGMA query_only = 1")
        cursor.close()

    return engine


__all__ = [
    "BUSY_BUDGET_SECONDS",
    "Durability",
    "configure",
    "connect_writer",
    "create_private",
    "is_busy",
    "migrate",
    "reader_engine",
    "refuse_foreign",
]
