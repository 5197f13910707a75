"""Choosing and opening a backend: the one place a URL becomes a store."""

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from thoughtledger.api.service import DEFAULT_TTL, Ledger
from thoughtledger.ledger.decide import DEFAULT_MAX_THOUGHT_BYTES
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.masking import mask_url
from thoughtledger.ledger.store.base import LedgerStore, utc_now
from thoughtledger.ledger.store.memory import MemoryEventStore

URL_ENV = "THOUGHTLEDGER_URL"
"""Environment variable naming the ledger when no URL is passed."""
READ_URL_ENV = "THOUGHTLEDGER_READ_URL"
"""Environment variable naming a hot standby to read from when a command is given no read URL."""

_POSTGRES = ("postgresql", "postgres", "postgresql+asyncpg")


def default_path() -> Path:
    r"""Return the embedded ledger's file, ``ledger.db`` in the user's data folder for the app.

    The folder follows each system's convention, as ``platformdirs`` knows it: on Linux
    ``$XDG_DATA_HOME/thoughtledger`` (``~/.local/share/thoughtledger`` when ``XDG_DATA_HOME`` is
    unset or not absolute), on macOS ``~/Library/Application Support/thoughtledger`` (recent
    ``platformdirs`` releases honour ``XDG_DATA_HOME`` there too), on Windows
    ``%LOCALAPPDATA%\thoughtledger``.
    """
    import platformdirs  # only when no URL is given: a server started with --db never asks

    return Path(platformdirs.user_data_dir("thoughtledger", appauthor=False)) / "ledger.db"


def schema_version() -> int:
    """The version of the database schema this release writes (and reads without upgrading)."""
    # The SQLite backend's plain copy (a unit test holds it equal to the schema's): the schema
    # module loads the database engine, which neither the surface nor ``doctor`` needs.
    from thoughtledger.ledger.store.sqlite.statements import DATABASE_SCHEMA_VERSION

    return DATABASE_SCHEMA_VERSION


def resolve_url(url: str | None = None) -> str:
    """Return the ledger URL to use: ``url``, else ``$THOUGHTLEDGER_URL``, else the default file."""
    return url or os.environ.get(URL_ENV) or f"sqlite:///{default_path()}"


async def open_store(
    url: str | None = None,
    *,
    clock: Callable[[], datetime] = utc_now,
    read_only: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    read_url: str | None = None,
) -> LedgerStore:
    """Open the store a URL names.

    Accepted forms: ``sqlite:///path/to/file.db`` (or ``sqlite+aiosqlite://``; add
    ``?durability=full`` to ``fsync`` every commit), a plain file path,
    ``postgresql://user@host:port/db`` (or ``postgresql+asyncpg://``; add ``?schema=name`` to keep
    the tables in a schema), and ``memory://`` (nothing is kept).

    Opened for writing (the default), a missing SQLite file and its folders are created (privately:
    folders 0700, the file 0600) and a new or older schema is brought up to date. Opened with
    ``read_only=True``, nothing is created, converted or written: a missing ledger, or a database
    without the ledger's tables, is refused and left as it was, and every write is refused.

    Upgrading a ledger written before the search index indexes every thought already in it, in
    batches, all in one transaction: ``progress``, when given, is called with what is being done,
    how many events of the log were gone through, and how many there are (at the start, after
    each batch, at the end), so that a long upgrade can show a progress bar.

    ``read_url`` names a hot standby of a PostgreSQL ledger's server: reads go there, writes to
    ``url``, and the store still reads its own writes (see :func:`open_ledger`).

    Raises:
        InvalidInputError: The URL is of no known form, or a ``read_url`` is given for a ledger
            that is not on PostgreSQL, or is not a PostgreSQL URL.
        StoreUnavailableError: The database cannot be reached or created.
        LedgerNotFoundError: ``read_only``, and there is no ledger at the URL.
        NotALedgerError: The file or database is not a ledger: not an SQLite database, or
            another application's tables and no ledger (``read_only``: anything but a ledger).
        SchemaVersionError: The database was written by a newer thoughtledger (``read_only``:
            or by an older one).
    """
    target = resolve_url(url)
    parts = urlsplit(target)
    scheme = parts.scheme.lower()
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    if read_url is not None and scheme not in _POSTGRES:
        raise InvalidInputError(
            f"a read URL (a hot standby) needs a PostgreSQL ledger, not {mask_url(target)!r}"
        )
    if scheme in ("", "file") or (len(scheme) == 1 and target[1:3] == ":\\"):
        path = Path(parts.path if scheme == "file" else target)
        return await _sqlite(path, {}, clock, read_only, progress)
    if scheme in ("sqlite", "sqlite+aiosqlite"):
        # As in SQLAlchemy: sqlite:///relative.db and sqlite:////absolute/path.db.
        rest = target.split("://", 1)[1].split("?", 1)[0]
        if not rest.startswith("/") or rest == "/":
            shown = mask_url(target)
            raise InvalidInputError(f"expected sqlite:///path/to/ledger.db, got {shown!r}")
        return await _sqlite(Path(rest[1:]), query, clock, read_only, progress)
    if scheme in _POSTGRES:
        from thoughtledger.ledger.store.postgres import PostgresEventStore

        # Handed over whole: SQLAlchemy's parser reads a password holding ? or :, which a split
        # on the first ? would cut in two (and its tail be taken for the port).
        return await PostgresEventStore.open(
            target, clock=clock, read_only=read_only, progress=progress, read_url=read_url
        )
    if scheme == "memory":
        return MemoryEventStore(clock=clock)
    raise InvalidInputError(
        f"unknown ledger URL {mask_url(target)!r}: use sqlite:///file.db, postgresql://... or "
        "memory://"
    )


async def _sqlite(
    path: Path,
    query: dict[str, str],
    clock: Callable[[], datetime],
    read_only: bool,
    progress: Callable[[str, int, int], None] | None,
) -> LedgerStore:
    from thoughtledger.ledger.store.sqlite import SqliteEventStore

    durability = query.get("durability", "normal")
    if durability not in ("normal", "full"):
        raise InvalidInputError(f"durability must be normal or full, got {durability!r}")
    return await SqliteEventStore.open(
        path,
        durability="full" if durability == "full" else "normal",
        clock=clock,
        read_only=read_only,
        progress=progress,
    )


@asynccontextmanager
async def open_ledger(
    url: str | None = None,
    *,
    ttl: timedelta | None = DEFAULT_TTL,
    clock: Callable[[], datetime] = utc_now,
    max_thought_bytes: int = DEFAULT_MAX_THOUGHT_BYTES,
    cache_size: int = 1024,
    read_only: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    read_url: str | None = None,
) -> AsyncIterator[Ledger]:
    """Open the ledger a URL names (the embedded SQLite file by default) and close it after.

    Args:
        url: See :func:`open_store`; ``None`` reads ``$THOUGHTLEDGER_URL``, else the default file.
        ttl: Idle time after which a session expires (``None``: never).
        clock: Source of the current time (UTC).
        max_thought_bytes: Largest accepted thought, in UTF-8 bytes.
        cache_size: Session states kept in memory.
        read_only: Open an existing ledger for reading only (see :func:`open_store`). Such a
            ledger records no expiry (that is a write): ``ttl`` does not apply to it.
        progress: Told how a long upgrade of an older ledger goes (see :func:`open_store`).
        read_url: A hot standby of the PostgreSQL server ``url`` names (streaming replication),
            to take the reads: sessions, histories, search, statistics, exports, verification
            and proofs are read there, while thoughts, annotations, forks, redactions,
            imports and checkpoints are written to ``url``. A read that follows a write through
            this ledger waits (up to a second) until the standby has replayed it, else reads
            ``url``: the ledger always reads its own writes. Subscriptions follow the
            standby's replay. Opened read-only, the ledger is checked on the standby and
            never connects to ``url``.

    Raises:
        InvalidInputError: The URL is of no known form, or ``read_url`` is given for a ledger
            not on PostgreSQL.
        StoreUnavailableError: The database cannot be reached or created.
        LedgerNotFoundError: ``read_only``, and there is no ledger at the URL.
        NotALedgerError: The file or database is not a ledger: not an SQLite database, or
            another application's tables and no ledger (``read_only``: anything but a ledger).
        SchemaVersionError: The database was written by a newer thoughtledger (``read_only``:
            or by an older one).
    """
    store = await open_store(
        url, clock=clock, read_only=read_only, progress=progress, read_url=read_url
    )
    ledger = Ledger(
        store,
        ttl=None if read_only else ttl,
        clock=clock,
        max_thought_bytes=max_thought_bytes,
        cache_size=cache_size,
        # The opener owns the ledger's lifetime (it closes it on the way out), so background
        # work started here always ends with it.
        follow_log=True,
    )
    try:
        # Events the loop marks have not taken in (an upgraded ledger, an import, another
        # program's appends) are folded in the background, after the first request is answered.
        ledger.loops.opened()
        yield ledger
    finally:
        await ledger.aclose()


__all__ = [
    "READ_URL_ENV",
    "URL_ENV",
    "default_path",
    "open_ledger",
    "open_store",
    "resolve_url",
    "schema_version",
]
