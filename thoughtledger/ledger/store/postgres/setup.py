"""Opening a PostgreSQL ledger: preparing or checking its schema, and what a driver error means.

Kept apart from the store's appends and reads, as for SQLite: this is what runs once per open,
and the one place a driver error becomes one of ours.
"""

from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.errors import (
    LedgerNotFoundError,
    NotALedgerError,
    SchemaVersionError,
    StoreError,
    StoreUnavailableError,
)
from thoughtledger.ledger.store import schema, schema_fills, schema_steps
from thoughtledger.ledger.store.base import utc_now
from thoughtledger.ledger.store.columns import views_current
from thoughtledger.ledger.store.postgres.stats_dialect import PostgresStats

_LOST_STATES = ("08", "57P01", "57P02")
"""SQLSTATEs of a lost connection: connection exceptions, administrator and crash shutdown."""


async def migrate(
    engine: AsyncEngine,
    where: str,
    pg_schema: str | None,
    progress: Callable[[str, int, int], None] | None = None,
) -> None:
    """Create the schema and tables, or bring them to this code's version.

    A step that goes through the whole log (see :data:`schema_fills.FILLS`) tells ``progress``
    how it goes (see :data:`schema_steps.UpgradeProgress`); every step runs in the one transaction.

    Raises:
        NotALedgerError: The database (or schema) holds another application's tables and no
            ledger; nothing was changed.
        SchemaVersionError: The database was written by a newer thoughtledger.
        StoreUnavailableError: The server cannot be reached.
        StoreError: A schema step failed; nothing was changed.
    """
    versions = schema.schema_versions
    try:
        async with engine.begin() as connection:
            # Several processes may open a fresh database at once: one prepares it at a time.
            await connection.execute(
                sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtext("thoughtledger")))
            )
            if pg_schema is not None:
                await connection.execute(sa.schema.CreateSchema(pg_schema, if_not_exists=True))
            await _refuse_foreign(connection, where, pg_schema)
            await connection.execute(sa.schema.CreateTable(versions, if_not_exists=True))
            current = (
                await connection.execute(
                    sa.select(sa.func.coalesce(sa.func.max(versions.c.version), 0))
                )
            ).scalar_one()
            if current > schema.DATABASE_SCHEMA_VERSION:
                raise SchemaVersionError(
                    f"{where} has schema version {current}, newer than this "
                    f"thoughtledger understands ({schema.DATABASE_SCHEMA_VERSION}); "
                    "upgrade thoughtledger"
                )
            for step in schema_steps.pending_steps(current):
                for ddl in schema_steps.MIGRATIONS[step](PostgresStats().json):
                    await connection.execute(ddl)
                fill = schema_fills.FILLS[step]() if step in schema_fills.FILLS else None
                if fill is not None and "postgresql" in fill.backends:
                    await _fill(connection, fill, progress)
                await connection.execute(
                    sa.insert(versions).values(version=step, applied_at=format_time(utc_now()))
                )
            # A field added to the definition of a thought is a column the stored view lacks.
            columns = await connection.execute(
                sa.text(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                    "current_schema() AND table_name = 'tl_thoughts' ORDER BY ordinal_position"
                )
            )
            if not views_current([name for (name,) in columns]):
                for ddl in schema_steps.refreshed_views(PostgresStats().json):
                    await connection.execute(ddl)
    except sa.exc.DBAPIError as exc:
        raise translate(exc, where) from exc
    except OSError as exc:
        raise StoreUnavailableError(f"cannot reach {where}: {exc}") from exc


async def _fill(
    connection: AsyncConnection,
    fill: schema_fills.Fill,
    progress: Callable[[str, int, int], None] | None,
) -> None:
    """Write a step's rows derived from the log, batch by batch, in the caller's transaction."""
    total = (await connection.execute(sa.text(schema_fills.FILL_COUNT))).scalar_one()
    size = schema_fills.fill_batch_size(total)
    boundary = sa.text(schema_fills.FILL_BOUNDARY)
    statement = sa.text(str(fill.statement.compile(dialect=connection.dialect)))
    low, done = 0, 0
    if not total:
        progress = None  # a new ledger: nothing to go through, nothing to show
    if progress is not None:
        progress(fill.description, 0, total)
    while done < total:
        end = (await connection.execute(boundary, {"low": low, "skip": size - 1})).scalar()
        high = schema_fills.LAST_POSITION if end is None else end
        await connection.execute(statement, {"low": low, "high": high})
        low, done = high, min(done + size, total)
        if progress is not None:
            progress(fill.description, done, total)
    for ddl in fill.then:
        await connection.execute(ddl)


async def _refuse_foreign(connection: AsyncConnection, where: str, pg_schema: str | None) -> None:
    """Refuse a schema that holds tables but no ledger (a mistyped URL): it is not ours to fill.

    Raises:
        NotALedgerError: Tables or views are there, and no ``tl_schema`` among them.
    """
    names = (
        (
            await connection.execute(
                sa.text(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema() ORDER BY table_name"
                )
            )
        )
        .scalars()
        .all()
    )
    if not names or schema.schema_versions.name in names:
        return
    place = _place(where, pg_schema)
    raise NotALedgerError(
        f"{place} is another application's database (tables such as "
        f"{names[0]!r}, none of a ledger's); nothing was changed. Give an empty database, "
        "or a schema of the ledger's own (?schema=thoughtledger in the URL)"
    )


async def check_ledger(engine: AsyncEngine, where: str, pg_schema: str | None) -> int:
    """Check, creating and changing nothing, that a ledger this code reads is there.

    Returns:
        The schema version the ledger holds (older than this release's when no writer has
        upgraded it yet).

    Raises:
        LedgerNotFoundError: The database (or schema) has no ledger tables.
        SchemaVersionError: The schema is newer, or older (reading never upgrades it).
        StoreUnavailableError: The server cannot be reached.
    """
    place = _place(where, pg_schema)
    versions = schema.schema_versions
    try:
        async with engine.connect() as connection:
            # Resolved through the search_path: the named schema, or the login's default.
            present = (
                await connection.execute(sa.select(sa.func.to_regclass(versions.name).is_not(None)))
            ).scalar_one()
            if not present:
                raise LedgerNotFoundError(f"no ledger at {place}: it has no thoughtledger tables")
            current = (
                await connection.execute(
                    sa.select(sa.func.coalesce(sa.func.max(versions.c.version), 0))
                )
            ).scalar_one()
    except sa.exc.DBAPIError as exc:
        raise translate(exc, where) from exc
    except OSError as exc:
        raise StoreUnavailableError(f"cannot reach {where}: {exc}") from exc
    if current > schema.DATABASE_SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{place} has schema version {current}, newer than this thoughtledger "
            f"understands ({schema.DATABASE_SCHEMA_VERSION}); upgrade thoughtledger"
        )
    if current < schema.READABLE_FROM:
        raise SchemaVersionError(
            f"{place} has schema version {current}, older than this thoughtledger reads "
            f"({schema.READABLE_FROM}), and reading never upgrades it; open it once for "
            "writing (for example with thoughtledger serve) to upgrade it"
        )
    return int(current)


def translate(exc: sa.exc.DBAPIError, where: str, *, doing: str = "") -> StoreError:
    """Return the error of ours that a driver error raised while using ``where`` means."""
    text = str(exc.orig).strip() or type(exc.orig).__name__
    if isinstance(exc, sa.exc.InterfaceError | sa.exc.OperationalError) or lost_connection(exc):
        return StoreUnavailableError(f"cannot use {where}: {text}")
    if doing:
        return StoreError(f"{doing} {where} failed: {text}")
    return StoreError(f"{where}: {text}")


def lost_connection(exc: BaseException) -> bool:
    """Return whether ``exc`` means the connection is gone (so that a new one may well work)."""
    import asyncpg

    if isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated:
        return True
    # The error itself, SQLAlchemy's adaptation of the driver's error, and the driver's own.
    orig = getattr(exc, "orig", None)
    for error in (exc, orig, getattr(orig, "__cause__", None)):
        if isinstance(error, ConnectionError | asyncpg.ConnectionDoesNotExistError):
            return True
        if isinstance(error, asyncpg.InterfaceError) and "closed" in str(error):
            return True
        # A server whose postmaster died sends its FATAL unasked; the driver's idle connection
        # is left mid-message, and refuses the next statement before sending it.
        if isinstance(error, asyncpg.InternalClientError) and "cannot switch to state" in str(
            error
        ):
            return True
        state = getattr(error, "sqlstate", None)
        if isinstance(state, str) and state.startswith(_LOST_STATES):
            return True
    return False


def _place(where: str, pg_schema: str | None) -> str:
    """The ledger's place for people: the URL as written, and its schema unless it names it."""
    if pg_schema is None or f"schema={pg_schema}" in where:
        return where
    return f"{where} (schema {pg_schema})"


__all__ = ["check_ledger", "lost_connection", "migrate", "translate"]
