"""Connections: a PostgreSQL URL made an engine (its password never echoed), and one read on it.

Shared by the store's primary and, when one is given, the hot standby its reads go to
(:mod:`thoughtledger.ledger.store.postgres.standby`): both take the same URL forms, and a read
on either is retried once on a lost connection, and, when the URL names several hosts, for as
long as a failover may take (:mod:`thoughtledger.ledger.store.postgres.failover`).
"""

import inspect
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from thoughtledger.ledger.errors import InvalidInputError, StoreUnavailableError
from thoughtledger.ledger.masking import mask_url
from thoughtledger.ledger.store.postgres.failover import (
    Reconnecting,
    failover_window,
    hosts_as_query,
)
from thoughtledger.ledger.store.postgres.setup import translate

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@dataclass(frozen=True, slots=True)
class Connected:
    """An engine, how to name its server in messages (password masked), and the schema.

    ``failover`` is how long a lost connection is retried for: a URL naming several hosts
    waits for a standby to be promoted (see :func:`failover_window`), one naming one host
    retries once.
    """

    engine: AsyncEngine
    where: str
    pg_schema: str | None
    failover: float = 0.0


def _connect_options() -> set[str]:
    """The URL query options the driver takes: asyncpg's ``connect()`` keywords and SQLAlchemy's."""
    import asyncpg

    keywords = set(inspect.signature(asyncpg.connect).parameters) - {"dsn", "loop"}
    return keywords | {"prepared_statement_cache_size", "prepared_statement_name_func"}


def engine_for(
    url: str,
    *,
    pg_schema: str | None,
    pool_size: int,
    read_only: bool,
    default_schema: str | None = None,
) -> Connected:
    """Check ``url`` and make an engine for it (no connection is opened yet).

    Args:
        url: A ``postgresql://`` or ``postgresql+asyncpg://`` URL; ``?application_name=``
            names the connections, ``?schema=`` is another way to give ``pg_schema``. It may
            name several hosts (``host1:5432,host2:5432`` or ``?host=...&host=...``): the
            driver takes the first that answers, and a writable store the first that takes
            writes (``target_session_attrs=read-write`` unless the URL says otherwise).
            ``?failover_timeout=SECONDS`` bounds how long a lost connection is retried for
            (default: 30 s with several hosts, one retry with one).
        pg_schema: The schema holding the tables (``None``: the login's ``search_path``).
        pool_size: Connections kept open for reads.
        read_only: Make every transaction read-only.
        default_schema: The schema when neither ``pg_schema`` nor the URL names one.

    Raises:
        InvalidInputError: The URL, one of its options, or the schema name is malformed.
        StoreUnavailableError: The driver (asyncpg) is not installed.
    """
    try:
        parsed = sa.make_url(hosts_as_query(url))
    except (sa.exc.ArgumentError, ValueError):  # ValueError: a port that is no number
        # Never the driver's words: they quote the URL's parts, the password among them.
        raise InvalidInputError(
            f"not a database URL: {mask_url(url)!r} (a password holding @ / ? # % must be "
            "percent-encoded, or given as ?password=...)"
        ) from None
    parsed, failover = failover_window(parsed)
    named = parsed.query.get("schema")
    if named is not None:  # ?schema=name, as open_ledger's URLs give it
        if not isinstance(named, str) or pg_schema is not None:
            raise InvalidInputError("give the schema once")
        pg_schema = named
        parsed = parsed.difference_update_query(["schema"])
    pg_schema = pg_schema or default_schema
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    if parsed.drivername != "postgresql+asyncpg":
        raise InvalidInputError(f"expected a postgresql+asyncpg URL, got {parsed.drivername}")
    hosts = parsed.query.get("host")
    several = isinstance(hosts, tuple) and len(hosts) > 1
    if several and not read_only and "target_session_attrs" not in parsed.query:
        # Else the driver takes the first server that answers, a standby among them.
        parsed = parsed.update_query_dict({"target_session_attrs": "read-write"})
    settings = {"application_name": parsed.query.get("application_name", "thoughtledger")}
    if not isinstance(settings["application_name"], str):
        raise InvalidInputError("give application_name once in the URL")
    # asyncpg takes server settings in a dict, not as keyword arguments.
    parsed = parsed.difference_update_query(["application_name"])
    # Named as the user wrote it (not as the driver's postgresql+asyncpg:// form, nor with
    # SQLAlchemy's percent-encoded hosts), its passwords masked (?password=, sslpassword=).
    where = mask_url(url)
    if pg_schema is not None:
        if _SCHEMA_NAME.fullmatch(pg_schema) is None:
            raise InvalidInputError(f"invalid PostgreSQL schema name {pg_schema!r}")
        settings["search_path"] = pg_schema
    if read_only:
        settings["default_transaction_read_only"] = "on"
    connect_args: dict[str, Any] = {"server_settings": settings}
    try:
        engine = create_async_engine(
            parsed, pool_size=pool_size, max_overflow=pool_size, connect_args=connect_args
        )
    except ImportError as exc:
        raise StoreUnavailableError(
            "PostgreSQL support needs asyncpg: pip install 'thoughtledger[postgres]'"
        ) from exc
    unknown = sorted(set(parsed.query) - _connect_options())
    if unknown:
        # Otherwise the driver fails on first use with a TypeError naming its own function.
        # libpq's spelling is the one people know; asyncpg's differs.
        hint = "; asyncpg spells sslmode=require as ssl=require" if "sslmode" in unknown else ""
        raise InvalidInputError(
            f"unknown PostgreSQL URL option {', '.join(map(repr, unknown))} "
            f"(known: application_name, schema, failover_timeout and asyncpg's connect "
            f"options such as ssl, "
            f"password, command_timeout){hint}"
        )
    return Connected(engine, where, pg_schema, failover)


async def read_rows(
    engine: AsyncEngine,
    where: str,
    query: "sa.Executable",
    forget: Callable[[], Awaitable[None]],
    ready: Callable[[AsyncConnection], Awaitable[bool]] | None = None,
    failover: float = 0.0,
) -> "list[sa.Row[Any]] | None":
    """Run a read on ``engine``; a lost connection is retried, after ``forget``.

    Args:
        engine: The server to read.
        where: How to name it in messages.
        query: The read.
        forget: Drops the connections (one was lost: the server likely restarted).
        ready: Awaited on the read's connection first; when it answers ``False``, nothing is
            read and ``None`` returned.
        failover: Seconds to go on trying while no server answers after a lost connection
            (0: retry once; see :class:`Reconnecting`).

    Raises:
        StoreError: The read failed (``StoreUnavailableError``: the server is unreachable).
    """
    reconnecting = Reconnecting(failover)
    while True:
        try:
            async with engine.connect() as connection:
                if ready is not None and not await ready(connection):
                    return None
                return list((await connection.execute(query)).all())
        except (sa.exc.DBAPIError, OSError) as exc:
            if not await reconnecting.again(exc):
                if isinstance(exc, sa.exc.DBAPIError):
                    raise translate(exc, where, doing="read from") from exc
                raise StoreUnavailableError(f"cannot reach {where}: {exc}") from exc
            await forget()


__all__ = ["Connected", "engine_for", "read_rows"]
