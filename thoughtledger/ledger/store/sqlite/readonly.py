"""Opening an SQLite ledger for reading only: never creating, converting or writing anything.

A reading command must not turn a mistyped path into a new, empty ledger that "verifies", nor
another application's database into a ledger (tables added, journal switched to WAL). So:

1. A missing path is refused, and so is a file that does not start with SQLite's header, before
   SQLite opens it.
2. The ledger's tables are looked for through an ``immutable=1`` connection, which creates no file
   beside the database (any other connection to a WAL database creates its ``-wal`` and ``-shm``).
   Without tables, and without a ``-wal`` file that could hold them, the file is refused untouched.
3. The ledger is then read with ``PRAGMA query_only`` set on every connection, so that SQLite
   refuses every write:

   * when a ``-wal`` file exists (a writer is at work, or stopped without closing), through
     ``mode=ro`` connections, which never touch the database file;
   * otherwise through ``mode=rw`` ones (never ``rwc``: nothing is created), because a ``mode=ro``
     connection to a WAL database creates ``-wal`` and ``-shm`` files it cannot remove again,
     while the last ``mode=rw`` connection to close removes them; with nothing in the WAL, its
     closing writes nothing to the database file;
   * where neither can open because nothing may be created beside the database (a read-only
     mount or folder) and there is no ``-wal`` whose contents would be missed, through an
     ``immutable=1`` connection, which reads the file as it is without locking it.

No DDL runs and the journal mode is never set.
"""

import sqlite3
from pathlib import Path

from thoughtledger.ledger.errors import (
    LedgerNotFoundError,
    NotALedgerError,
    SchemaVersionError,
    StoreUnavailableError,
)
from thoughtledger.ledger.store.sqlite.statements import (
    DATABASE_SCHEMA_VERSION,
    READABLE_FROM,
    STATEMENTS,
)

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"


def connect_read_only(path: Path) -> tuple[Path, sqlite3.Connection, str, int]:
    """Open the ledger at ``path`` for reading only.

    Returns:
        The file, a connection that refuses writes, the URI it was opened with (for more
        connections like it), and the schema version the ledger holds (older than this
        release's when no writer has upgraded it yet).

    Raises:
        LedgerNotFoundError: Nothing exists at ``path``.
        NotALedgerError: The file is not an SQLite database, or not a thoughtledger ledger.
        SchemaVersionError: The schema is newer than this code, or older (reading never
            upgrades it).
        StoreUnavailableError: The path is a directory, or the file cannot be read.
    """
    file = path.expanduser()
    _check_header(file)
    base = file.resolve().as_uri()
    wal = Path(f"{file}-wal")
    probe = _connect(base + "?immutable=1", file)
    try:
        found = _tables(probe, file)
    finally:
        probe.close()
    if "tl_schema" not in found and _size(wal) == 0:
        # Without a WAL the main file is the whole database: it holds no ledger.
        raise NotALedgerError(f"{file} is an SQLite database but not a thoughtledger ledger")
    live = wal.exists()
    uri = base + ("?mode=ro" if live else "?mode=rw")
    try:
        connection = _connect(uri, file)
        found = _tables(connection, file)
    except StoreUnavailableError as exc:
        code = getattr(exc.__cause__, "sqlite_errorcode", 0)
        cannot_open = code & 0xFF == sqlite3.SQLITE_CANTOPEN  # the primary code of an extended one
        if not cannot_open or live:
            raise
        uri = base + "?immutable=1"
        connection = _connect(uri, file)
        found = _tables(connection, file)
    try:
        version = _check_schema(connection, found, file)
    except BaseException:
        connection.close()
        raise
    return file, connection, uri, version


def _check_header(file: Path) -> None:
    try:
        with file.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError as exc:
        raise LedgerNotFoundError(f"no ledger at {file}") from exc
    except IsADirectoryError as exc:
        raise StoreUnavailableError(f"{file} is a directory, not a database file") from exc
    except OSError as exc:
        if file.is_dir():
            raise StoreUnavailableError(f"{file} is a directory, not a database file") from exc
        raise StoreUnavailableError(f"cannot read the ledger at {file}: {exc}") from exc
    if not header:
        raise NotALedgerError(f"{file} is an empty file, not a thoughtledger ledger")
    if header != SQLITE_HEADER:
        raise NotALedgerError(f"{file} is not an SQLite database")


def _connect(uri: str, file: Path) -> sqlite3.Connection:
    try:
        connection = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"cannot read the ledger at {file}: {exc}") from exc
    try:
        connection.execute("PRAGMA query_only = 1")
        connection.execute("PRAGMA busy_timeout = 1000")  # WAL readers wait only in recoveries
    except sqlite3.Error as exc:
        connection.close()
        raise StoreUnavailableError(f"cannot read the ledger at {file}: {exc}") from exc
    return connection


def _tables(connection: sqlite3.Connection, file: Path) -> set[str]:
    """Return the names of the tables in the database (reading it for the first time).

    Raises:
        NotALedgerError: The file is not a database after all (damaged, or encrypted).
        StoreUnavailableError: It cannot be read.
    """
    try:
        return {row[0] for row in connection.execute(_TABLES)}
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError):
            connection.close()
            raise StoreUnavailableError(f"cannot read the ledger at {file}: {exc}") from exc
        connection.close()
        raise NotALedgerError(f"{file} is not a readable SQLite database: {exc}") from exc


def _check_schema(connection: sqlite3.Connection, found: set[str], file: Path) -> int:
    """Return the schema version the ledger holds, if this code reads it.

    Raises:
        NotALedgerError: The database has no ledger tables.
        SchemaVersionError: The schema is newer than this code, or older than it reads.
        StoreUnavailableError: The version cannot be read.
    """
    if "tl_schema" not in found:
        raise NotALedgerError(f"{file} is an SQLite database but not a thoughtledger ledger")
    try:
        current = connection.execute(STATEMENTS["schema_version"]).fetchone()[0]
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"cannot read the ledger at {file}: {exc}") from exc
    if current > DATABASE_SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{file} has schema version {current}, newer than this thoughtledger "
            f"understands ({DATABASE_SCHEMA_VERSION}); upgrade thoughtledger"
        )
    if current < READABLE_FROM:
        raise SchemaVersionError(
            f"{file} has schema version {current}, older than this thoughtledger reads "
            f"({READABLE_FROM}), and reading never upgrades it; open it once for writing "
            "(for example with thoughtledger serve) to upgrade it"
        )
    return int(current)


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


__all__ = ["SQLITE_HEADER", "connect_read_only"]
