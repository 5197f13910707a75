"""The PostgreSQL backend: one ledger shared by many processes and machines.

An append is one SQL statement, so it is atomic without an explicit transaction and costs one
round trip (see :mod:`thoughtledger.ledger.store.postgres.append`), run on a connection the store
holds for its writes (:mod:`thoughtledger.ledger.store.postgres.writers`); appends to several
sessions made at once share one (:mod:`thoughtledger.ledger.store.postgres.grouped`).

Gap-safe positions without a table lock: a position is ``(transaction id << 16) + n``. Transaction
ids only grow, and :meth:`~.EventStore.read_all` returns only positions below the oldest
transaction still in flight (``pg_snapshot_xmin``), so a reader can never see a position before a
lower one commits.
Positions are therefore strictly increasing in commit-visibility order but not dense.

A lost connection (the server restarted, or an administrator ended it) is retried once, on new
connections, for reads and appends alike: an append is one atomic statement, and when its answer
was lost after it committed, the retry finds its event ids stored and returns them, never writing
them twice. A URL naming several hosts goes on retrying while a standby is promoted, within
a bound (see :mod:`thoughtledger.ledger.store.postgres.failover`).
Opened read-only, the store runs no DDL and every transaction is read-only.

Opened with a ``read_url``, reads go to a hot standby and writes to the primary; the store reads
its own writes there all the same (see :mod:`thoughtledger.ledger.store.postgres.standby`).
"""

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from functools import partial
from typing import Any
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from thoughtledger.ledger.chain import GENESIS_HASH, PreparedEvent, seal
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import (
    ConcurrencyError,
    InvalidInputError,
    StoreError,
    StoreUnavailableError,
)
from thoughtledger.ledger.store.base import (
    DEFAULT_MAX_EVENT_BYTES,
    Clock,
    utc_now,
)
from thoughtledger.ledger.store.heads_sql import last_event_select
from thoughtledger.ledger.store.loop_marks import FoldedMarks
from thoughtledger.ledger.store.postgres.append import Head, KnownHeads, append_error, insert_sealed
from thoughtledger.ledger.store.postgres.connect import engine_for, read_rows
from thoughtledger.ledger.store.postgres.failover import Reconnecting
from thoughtledger.ledger.store.postgres.grouped import GroupedAppends
from thoughtledger.ledger.store.postgres.imports import import_streams
from thoughtledger.ledger.store.postgres.listen import (
    POLL_INTERVAL,
    Listener,
    Notifier,
    PostgresWatch,
)
from thoughtledger.ledger.store.postgres.log_tree import PostgresTree
from thoughtledger.ledger.store.postgres.loop_writes import fold_loop_marks
from thoughtledger.ledger.store.postgres.positions import POSITION_SHIFT, held_back, visible_below
from thoughtledger.ledger.store.postgres.redact import strip
from thoughtledger.ledger.store.postgres.replay import ReplayFollower
from thoughtledger.ledger.store.postgres.search_follow import SearchFollower
from thoughtledger.ledger.store.postgres.setup import check_ledger, migrate
from thoughtledger.ledger.store.postgres.setup import translate as _translate
from thoughtledger.ledger.store.postgres.standby import (
    Standby,
    for_a_write,
    reading_for_a_write,
)
from thoughtledger.ledger.store.postgres.stats_dialect import POSTGRES_STATS, PostgresStats
from thoughtledger.ledger.store.postgres.writers import HeldWriters
from thoughtledger.ledger.store.redaction import Stripping
from thoughtledger.ledger.store.schema import DATABASE_SCHEMA_VERSION
from thoughtledger.ledger.store.sql import SqlEventStore
from thoughtledger.ledger.store.stored_forms import hash_text


class PostgresEventStore(SqlEventStore):
    """An event store in a PostgreSQL database. Open it with :meth:`open`.

    Built from parts: the connections held for writes (:class:`HeldWriters`), the heads it last
    wrote (:class:`KnownHeads`), the Merkle tree's rows (:class:`PostgresTree`), the LISTEN
    connection its subscriptions share (:class:`Listener`) and the NOTIFY after each commit
    (:class:`Notifier`); the append statement, imports and redactions are functions of their own
    modules, run on its engine or writers.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        where: str,
        *,
        clock: Clock,
        max_event_bytes: int,
        writers: int = 4,
        read_only: bool = False,
    ) -> None:
        super().__init__(
            engine,
            where,
            tree_rows=PostgresTree(self._fetch, self._writing, where),
            read_only=read_only,
            clock=clock,
            max_event_bytes=max_event_bytes,
        )
        self._heads = KnownHeads()
        self._writers = HeldWriters(engine, writers, lambda: self._closed)
        self._listener = Listener(self._listening_connection, self._committed)
        self._notifier = Notifier(self._listening_connection)
        self._standby: Standby | None = None
        self._follower: ReplayFollower | None = None  # the listener's stand-in on a standby
        self._failover = 0.0  # seconds a lost connection is retried for (several hosts: > 0)
        self._search_follower = SearchFollower(self._index_writer, where)
        self._grouped = GroupedAppends(
            self._heads,
            self._append_alone,
            self._writer,
            self._record_time,
            self._already_stored,
            self._group_written,
        )

    @asynccontextmanager
    async def _writer(self) -> AsyncIterator[Any]:
        try:
            async with self._writers.lend() as driver:
                yield driver
        finally:
            # After the write, not before: a read that starts while it is under way need not
            # see it, and one asking the primary's position then would ask too early.
            if self._standby is not None:
                self._standby.wrote()

    @asynccontextmanager
    async def _index_writer(self) -> AsyncIterator[Any]:
        """Lend a held writer's driver to the search index's catch-up.

        Not through :meth:`_writer`: what the catch-up writes is derived, and a read on a
        standby need not wait for it.

        Raises:
            StoreError: The store is closed or read-only.
        """
        if self._closed or self.read_only:
            raise StoreError("the store is closed or read-only")
        async with self._writers.lend() as driver:
            yield driver

    @asynccontextmanager
    async def _writing(self, undone: str) -> AsyncIterator[Any]:
        """Lend a held writer connection's driver, once the store is open and writable.

        Raises:
            StoreError: The store is closed, or was opened read-only (``undone`` says what was
                not done).
        """
        if self._closed:
            raise StoreError("the store is closed")
        if self.read_only:
            raise StoreError(f"{self._where} was opened read-only; {undone}")
        async with self._writer() as driver:
            yield driver

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        pg_schema: str | None = None,
        pool_size: int = 16,
        writers: int = 4,
        clock: Clock = utc_now,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        read_only: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
        read_url: str | None = None,
    ) -> "PostgresEventStore":
        """Connect to the ledger at ``url`` (``postgresql+asyncpg://...``), creating its tables.

        Args:
            url: A SQLAlchemy URL for asyncpg; ``?application_name=...`` names the connections
                in ``pg_stat_activity`` (default ``thoughtledger``), ``?schema=...`` is another
                way to give ``pg_schema``.
            pg_schema: A PostgreSQL schema to keep the tables in (created if missing);
                ``None`` uses the connection's default ``search_path``.
            pool_size: Connections kept open for reads.
            writers: Connections held open for appends (appends beyond this many wait).
            clock: Source of recorded times.
            max_event_bytes: Largest accepted payload of one event.
            read_only: Open an existing ledger for reading only: no schema or table is created
                or upgraded, every transaction is read-only, and every write is refused.
            progress: Told how an upgrade that goes through the whole log goes (indexing an
                older ledger's thoughts for search): what it does, events done, events in all.
            read_url: A hot standby of ``url``'s server to send reads to (same URL forms, same
                schema); writes stay on ``url``. Read-only, the ledger is checked on the
                standby and the primary is never connected to.

        Returns:
            The open store.

        Raises:
            InvalidInputError: The URL (or ``read_url``) or schema name is malformed.
            StoreUnavailableError: The server cannot be reached or refuses the login.
            LedgerNotFoundError: ``read_only``, and the database (or schema) has no ledger tables.
            NotALedgerError: The database (or schema) holds another application's tables and no
                ledger.
            SchemaVersionError: The database was written by a newer thoughtledger
                (``read_only``: or by an older one).
        """
        primary = engine_for(url, pg_schema=pg_schema, pool_size=pool_size, read_only=read_only)
        pg_schema = primary.pg_schema
        standby = None
        if read_url is not None:
            # The tables are where the primary's are: the standby is a copy of its database.
            try:
                standby = engine_for(
                    read_url,
                    pg_schema=None,
                    pool_size=pool_size,
                    read_only=True,
                    default_schema=pg_schema,
                )
            finally:
                if standby is None or standby.pg_schema != pg_schema:
                    await primary.engine.dispose()
            if standby.pg_schema != pg_schema:
                await standby.engine.dispose()
                raise InvalidInputError("the read URL names another schema than the ledger's")
        store = cls(
            primary.engine,
            primary.where,
            clock=clock,
            max_event_bytes=max_event_bytes,
            writers=writers,
            read_only=read_only,
        )
        store._failover = primary.failover
        if standby is not None:
            store._standby = Standby(standby.engine, standby.where, store._on_primary)
            store._follower = ReplayFollower(standby.engine, store._committed)
        try:
            if read_only:
                checked = primary if standby is None else standby
                stored = await check_ledger(checked.engine, checked.where, pg_schema)
            else:
                await migrate(primary.engine, primary.where, pg_schema, progress)
                stored = DATABASE_SCHEMA_VERSION  # migrate() brought it there
                if standby is not None:
                    # Nothing else reads before the first answer: a standby that cannot be
                    # reached is said at opening, in one line, not at the first read.
                    probe = sa.select(1)
                    await read_rows(standby.engine, standby.where, probe, standby.engine.dispose)
                # Planned once the store is sure to open (a refused opening leaves no timer).
                store._search_follower.catch_up_soon()
        except BaseException:
            await primary.engine.dispose()
            if standby is not None:
                await standby.engine.dispose()
            raise
        store.stored_schema_version = stored
        return store

    async def _append(
        self,
        session_id: str,
        prepared: Sequence[PreparedEvent],
        expected_version: int,
        ids: Sequence[UUID],
    ) -> list[RecordedEvent]:
        if self._closed or self.read_only:  # refused alone, as it always was
            return await self._append_alone(session_id, prepared, expected_version, ids)
        return await self._grouped.append(session_id, prepared, expected_version, ids)

    async def _append_alone(
        self,
        session_id: str,
        prepared: Sequence[PreparedEvent],
        expected_version: int,
        ids: Sequence[UUID],
    ) -> list[RecordedEvent]:
        try:
            with reading_for_a_write():
                return await self._append_here(session_id, prepared, expected_version, ids)
        except ConcurrencyError:
            # Refused before reaching a writer too (a head read on the primary): the primary
            # holds something newer, which the reload before a retry must wait for.
            if self._standby is not None:
                self._standby.wrote()
            raise

    async def _append_here(
        self,
        session_id: str,
        prepared: Sequence[PreparedEvent],
        expected_version: int,
        ids: Sequence[UUID],
    ) -> list[RecordedEvent]:
        if self._closed:
            raise StoreError("the store is closed")
        if self.read_only:
            raise StoreError(f"{self._where} was opened read-only; nothing was written")
        version, head_hash, head_time = await self._heads.head_for(
            session_id, expected_version, self._last_event
        )
        if version != expected_version:
            raise ConcurrencyError(session_id, expected_version, version)
        now = self._record_time(head_time)
        sealed = seal(
            session_id,
            prepared,
            version=version,
            head_hash=head_hash,
            event_ids=ids,
            recorded_at=now,
        )
        last = sealed[-1]
        reconnecting = Reconnecting(self._failover)
        refused: Exception | None = None
        while True:
            try:
                async with self._writer() as driver:
                    positions = await insert_sealed(
                        driver,
                        sealed,
                        expected_version=expected_version,
                        head_hash=head_hash,
                    )
                break
            except Exception as exc:  # the driver's errors are translated right here
                self._heads.forget(session_id)
                if not await reconnecting.again(exc):
                    refused = exc
                    positions = []
                    break
                await self._forget_connections()
        if not positions:
            self._heads.forget(session_id)
            if reconnecting.retried:
                # The lost answer may have been this very append's: then its events are stored
                # (and the retry met them on the stream key, or found the head moved past them).
                stored = await self._already_stored(session_id, prepared, expected_version, ids)
                if stored is not None:
                    last_stored = stored[-1]
                    self._heads.remember(
                        session_id, last_stored.version, last_stored.hash, last_stored.recorded_at
                    )
                    self._notifier.committed()
                    return stored
            if refused is not None:
                raise await append_error(
                    refused, self._where, session_id, expected_version, self.stream_head
                ) from refused
            head = await self.stream_head(session_id)
            raise ConcurrencyError(session_id, expected_version, head.version if head else 0)
        self._heads.remember(session_id, last.version, last.hash, now)
        self._notifier.committed()
        self._search_follower.appended(len(sealed))
        return [item.at(position) for item, position in zip(sealed, positions, strict=True)]

    async def _last_event(self, session_id: str) -> Head:
        """The head an append goes on from: its session's last event (a new session: none).

        Raises:
            StoreError: The read failed.
        """
        rows = await self._fetch(last_event_select(session_id))
        if not rows:
            return (0, GENESIS_HASH, None)
        last = rows[0]
        return (last.version, hash_text(last.hash), last.recorded_at)

    def _group_written(self, count: int) -> None:
        self._notifier.committed()
        self._search_follower.appended(count)

    async def _import(self, streams: dict[str, list[RecordedEvent]]) -> int:
        if self._closed:
            raise StoreError("the store is closed")
        for session_id in streams:
            self._heads.forget(session_id)
        try:
            written = await import_streams(self._engine, self._where, streams)
        finally:
            if self._standby is not None:
                self._standby.wrote()
        if written:
            self._notifier.committed()
            self._search_follower.appended(0)  # its thoughts are indexed: the position moves
        return written

    async def _fold_loop_marks(self, through: int, to: int, folded: Sequence[FoldedMarks]) -> bool:
        async with self._writing("no loop marks were written") as driver:
            try:
                return await fold_loop_marks(driver, through, to, folded)
            except Exception as exc:  # the driver's errors are translated right here
                raise StoreError(f"writing loop marks in {self._where} failed: {exc}") from exc

    async def _strip(self, changes: Sequence[Stripping], *, vacuum: bool) -> int:
        return await strip(
            self._writing("nothing was redacted"), self._where, changes, vacuum=vacuum
        )

    def _visible_below(self) -> sa.ColumnElement[bool]:
        return visible_below()

    def _watch(self, poll_interval: float | None) -> PostgresWatch:
        """Subscriptions share one LISTEN connection, or one follower of a standby's replay.

        See :mod:`.ledger.store.postgres.listen` and :mod:`.ledger.store.postgres.replay`.
        """
        return PostgresWatch(
            self._follower or self._listener,
            self._committed,
            partial(held_back, self._fetch),
            poll_interval or POLL_INTERVAL,
        )

    async def _listening_connection(self) -> AsyncConnection:
        """Open a connection of the store's own (settings, search path) to listen or notify on.

        Raises:
            StoreError: The server cannot be reached (``StoreUnavailableError``) or refused.
        """
        if self._closed:
            raise StoreError("the store is closed")
        try:
            return await self._engine.connect()
        except sa.exc.DBAPIError as exc:
            raise _translate(exc, self._where, doing="listen on") from exc
        except OSError as exc:
            raise StoreUnavailableError(f"cannot reach {self._where}: {exc}") from exc

    def _stats_dialect(self) -> PostgresStats:
        return POSTGRES_STATS

    def _primary_reads(self) -> AbstractContextManager[object]:
        """An import's reads are asked of the primary: the import follows there."""
        return reading_for_a_write()

    async def _fetch(self, query: "sa.Executable") -> "list[sa.Row[Any]]":
        """Run a read: on the standby when there is one and it has this store's writes.

        Raises:
            StoreError: The read failed (``StoreUnavailableError``: a server is unreachable).
        """
        if self._closed:
            raise StoreError("the store is closed")
        standby = self._standby
        if standby is not None and not for_a_write():
            engine, where = standby.engine, standby.where
            rows = await read_rows(engine, where, query, engine.dispose, standby.caught_up)
            if rows is not None:
                return rows
        return await self._on_primary(query)

    async def _on_primary(self, query: "sa.Executable") -> "list[sa.Row[Any]]":
        """Run a read on the primary; a lost connection is retried once, on a new one.

        Raises:
            StoreError: The read failed (``StoreUnavailableError``: the server is unreachable).
        """
        if self._closed:
            raise StoreError("the store is closed")
        rows = await read_rows(
            self._engine, self._where, query, self._forget_connections, failover=self._failover
        )
        assert rows is not None  # noqa: S101  # nothing to wait for, so always rows
        return rows

    async def _forget_connections(self) -> None:
        """Drop the held and pooled connections: when one was lost, the server likely restarted."""
        await self._writers.drop_idle()
        await self._engine.dispose()

    async def aclose(self) -> None:
        """Close every pooled connection."""
        if self._closed:
            return
        await self._search_follower.close()  # the index takes in what this store appended
        await self._notifier.close()  # announce the last commits before the engine goes
        self._closed = True
        self._committed.notify()  # subscribers wake, see the store closed, and end
        await self._listener.close()
        if self._follower is not None:
            await self._follower.close()
        await self._writers.close()
        await self._engine.dispose()
        if self._standby is not None:
            await self._standby.engine.dispose()


__all__ = ["POSITION_SHIFT", "PostgresEventStore"]
