"""The SQLite backend: the embedded default.

Writes bypass the async driver on purpose. In WAL mode with ``synchronous=NORMAL`` a commit is a
few ``write()`` calls and no ``fsync``, cheaper (tens of microseconds) than a single hop to a driver
thread and back; so appends are queued, and one callback on the event loop commits every queued
append in one transaction (group commit) on a held connection with pre-compiled statements. Each
caller learns its own outcome: a batch of appends to sessions whose heads this process knows is
written with two ``executemany`` calls, anything else one append at a time, and a reused event id
sends the batch back through with a savepoint per append. When the database is busy (another
process writing) the commit is retried with a growing, bounded delay that never blocks the loop.
With ``durability="full"`` every commit also waits for ``fsync``: on the loop while that takes
under 2 ms, on a worker thread from the first commit that takes longer (a slow disk must not stall
every other task).

Reads go through SQLAlchemy's async engine on aiosqlite, in their own connections (WAL lets them
run beside the writer). Opened read-only (see :mod:`ledger.store.sqlite.readonly`), the store has no
writer: one connection that refuses writes serves the short reads, and scans use more like it.
"""

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from ledger.chain import GENESIS_HASH, PreparedEvent
from ledger.envelope import LogRow, RecordedEvent, format_time
from ledger.errors import (
    InvalidInputError,
    LedgerError,
    StoreError,
    StoreUnavailableError,
)
from ledger.ids import check_id
from ledger.store.base import DEFAULT_MAX_EVENT_BYTES, Clock, StreamHead, utc_now
from ledger.store.checks import check_page, check_window
from ledger.store.imports import plan_import
from ledger.store.rows import decode_rows, head_time, stored_row
from ledger.store.sql import SqlEventStore
from ledger.store.sqlite.batch import (
    INSERT_FIRST,
    SELECT_HEAD,
    BatchWriter,
    Outcome,
    Rejected,
    Request,
)
from ledger.store.sqlite.readonly import connect_read_only
from ledger.store.sqlite.redact import SqliteRedaction
from ledger.store.sqlite.setup import (
    BUSY_BUDGET_SECONDS,
    Durability,
    configure,
    connect_writer,
    is_busy,
    migrate,
    reader_engine,
)
from ledger.store.sqlite.statements import STATEMENTS
from ledger.store.sqlite.tree import SqliteTree, grow
from ledger.store.subscribe import PollingWatch
from ledger.store.tree import StoredNode, TreeTip

if TYPE_CHECKING:
    from ledger.store.sql_stats import StatsDialect

_IMPORT_HEAD = STATEMENTS["import_head"]
_READ_WINDOW = STATEMENTS["read_stream_to"]
_NO_BOUND = 2**63 - 1
_T = TypeVar("_T")
"""The largest version SQLite stores: a window bound that excludes nothing."""

POLL_INTERVAL = 0.05
"""Seconds between a subscription's checks for commits by other processes, unless told."""

_INLINE_SYNC_SECONDS = 0.002
"""A commit at durability="full" slower than this moves later commits to a worker thread."""


@dataclass(slots=True)
class _Batch:
    requests: list[Request] = field(default_factory=list)
    deadline: float = 0.0
    delay: float = 0.001


class SqliteEventStore(SqliteRedaction, SqliteTree, SqlEventStore):
    """An event store in one SQLite file (WAL mode). Open it with :meth:`open`.

    Attributes:
        path: The database file.
        durability: What a commit survives (see :meth:`open`).
        read_only: Whether it was opened for reading only (every write is refused).
    """

    def __init__(
        self,
        path: Path,
        writer: sqlite3.Connection,
        reader: sqlite3.Connection,
        *,
        uri: str,
        read_only: bool,
        durability: Durability,
        clock: Clock,
        max_event_bytes: int,
    ) -> None:
        super().__init__(
            lambda: reader_engine(uri), str(path), clock=clock, max_event_bytes=max_event_bytes
        )
        self.path = path
        self.read_only = read_only
        self.durability: Durability = durability
        self._writer = writer
        # Short reads (one session's stream, its head) run inline on this connection: cheaper than
        # a hop to a driver thread, like the writer's commits. Scans go through the engine.
        self._reader = reader
        self._pending: list[Request] = []
        self._flushing = False
        self._batch = BatchWriter()
        self._idle = asyncio.Event()
        self._idle.set()
        self._commit_in_thread = False

    def holds_file(self, path: Path) -> bool:
        """Whether ``path`` is the database file, or its write-ahead log or shared-memory file.

        Raises:
            OSError: The path cannot be resolved.
        """
        own = self.path.resolve()
        return path.resolve() in (
            own,
            own.with_name(own.name + "-wal"),
            own.with_name(own.name + "-shm"),
        )

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        durability: Durability = "normal",
        clock: Clock = utc_now,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        read_only: bool = False,
    ) -> "SqliteEventStore":
        """Open (creating if needed) the ledger in the SQLite file at ``path``.

        Args:
            path: The database file; missing parent folders are created (mode 0700, and the
                file 0600, whatever the umask).
            durability: ``"normal"``: a commit survives a crash of the process (WAL,
                ``synchronous=NORMAL``); ``"full"``: it also survives power loss (``fsync`` on
                every commit, ``synchronous=FULL``).
            clock: Source of recorded times.
            max_event_bytes: Largest accepted payload of one event.
            read_only: Open an existing ledger for reading only: nothing is created, converted
                or written, and every write is refused.

        Returns:
            The open store.

        Raises:
            InvalidInputError: ``durability`` is not ``"normal"`` or ``"full"``.
            StoreUnavailableError: The file cannot be created or opened.
            LedgerNotFoundError: ``read_only``, and there is no file at ``path``.
            NotALedgerError: The file is not an SQLite database (``read_only``: or not a ledger).
            SchemaVersionError: The database was written by a newer thoughtledger
                (``read_only``: or an older one).
        """
        if durability not in ("normal", "full"):
            raise InvalidInputError(f"durability must be 'normal' or 'full', got {durability!r}")
        if read_only:
            file, reader, uri = connect_read_only(Path(path))
            return cls(
                file,
                reader,
                reader,
                uri=uri,
                read_only=True,
                durability=durability,
                clock=clock,
                max_event_bytes=max_event_bytes,
            )
        file, writer = connect_writer(Path(path))
        try:
            await configure(writer, durability)
            await migrate(writer, file)
        except BaseException:
            writer.close()
            raise
        reader = sqlite3.connect(file, isolation_level=None, check_same_thread=False)
        reader.execute("PRAGMA query_only = 1")
        reader.execute("PRAGMA busy_timeout = 1000")  # WAL readers wait only in rare recoveries
        return cls(
            file,
            writer,
            reader,
            uri=file.resolve().as_uri(),
            read_only=False,
            durability=durability,
            clock=clock,
            max_event_bytes=max_event_bytes,
        )

    # -- writes -------------------------------------------------------------------------------

    async def _append(
        self,
        session_id: str,
        prepared: Sequence[PreparedEvent],
        expected_version: int,
        ids: Sequence[UUID],
    ) -> list[RecordedEvent]:
        if self._closed:
            raise StoreError("the store is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[RecordedEvent]] = loop.create_future()
        self._pending.append(Request(session_id, prepared, expected_version, ids, future))
        if not self._flushing:
            self._flushing = True
            self._idle.clear()
            loop.call_soon(self._flush, _Batch(deadline=time.monotonic() + BUSY_BUDGET_SECONDS))
        return await future

    def _flush(self, batch: _Batch) -> None:
        # Requests that arrived while this batch waited for the lock ride along with it.
        batch.requests.extend(self._pending)
        self._pending = []
        if self._commit_in_thread:
            asyncio.get_running_loop().create_task(self._flush_in_thread(batch))
            return
        started = time.perf_counter()
        try:
            outcomes = self._transact(batch.requests)
        except _Busy:
            self._retry_later(batch)
            return
        except StoreError as exc:
            outcomes = [Outcome(error=exc) for _ in batch.requests]
        if self.durability == "full" and time.perf_counter() - started > _INLINE_SYNC_SECONDS:
            # This disk syncs slowly: waiting for it on the loop would stall every other task, so
            # from now on commits wait for it on a worker thread instead.
            self._commit_in_thread = True
        self._settle(batch.requests, outcomes)

    async def _flush_in_thread(self, batch: _Batch) -> None:
        try:
            outcomes = await asyncio.to_thread(self._transact, batch.requests)
        except _Busy:
            self._retry_later(batch)
            return
        except StoreError as exc:
            outcomes = [Outcome(error=exc) for _ in batch.requests]
        self._settle(batch.requests, outcomes)

    def _retry_later(self, batch: _Batch) -> None:
        if time.monotonic() + batch.delay > batch.deadline:
            error = StoreUnavailableError(
                f"the ledger at {self.path} stayed locked by another writer for "
                f"{BUSY_BUDGET_SECONDS:.0f} s; nothing was written, try again"
            )
            self._settle(batch.requests, [Outcome(error=error) for _ in batch.requests])
            return
        delay = batch.delay
        batch.delay = min(batch.delay * 2, 0.1)
        asyncio.get_running_loop().call_later(delay, self._flush, batch)

    def _settle(self, requests: list[Request], outcomes: list[Outcome]) -> None:
        if any(outcome.error is None for outcome in outcomes):
            self._committed.notify()
        for request, outcome in zip(requests, outcomes, strict=True):
            if request.future.done():  # the caller was cancelled; the outcome stands regardless
                continue
            if outcome.error is not None:
                request.future.set_exception(outcome.error)
            else:
                assert outcome.recorded is not None  # noqa: S101  # one of the two is always set
                request.future.set_result(outcome.recorded)
        if self._pending:
            asyncio.get_running_loop().call_soon(
                self._flush, _Batch(deadline=time.monotonic() + BUSY_BUDGET_SECONDS)
            )
        else:
            self._flushing = False
            self._idle.set()

    def _transact(self, requests: list[Request], *, isolate: bool = False) -> list[Outcome]:
        """Commit every request that passes its version check in one transaction.

        Without ``isolate`` no savepoints are taken: a refused request has written nothing by the
        time it is refused, except on a reused event id, which rolls the batch back and redoes it
        with a savepoint per request so that only the offender fails.

        Raises:
            _Busy: Another connection holds the write lock; nothing was done.
            StoreError: The transaction failed; nothing was written.
        """
        db = self._begin()
        try:
            outcomes = self._batch.apply(db, requests, self._now(), isolate=isolate)
            db.execute("COMMIT")
        except Rejected as rejected:
            db.execute("ROLLBACK")
            self._batch.rolled_back()
            if len(requests) > 1:
                return self._transact(requests, isolate=True)
            return [Outcome(error=rejected.error)]
        except BaseException as exc:
            self._batch.rolled_back()
            self._roll_back_after(exc, "write to")
            raise
        self._batch.committed()
        return outcomes

    def _begin(self) -> sqlite3.Connection:
        """Start a write transaction on the writer connection and return it.

        Raises:
            _Busy: Another connection holds the write lock.
            StoreError: The transaction cannot start.
        """
        if self.read_only:
            raise StoreError(f"the ledger at {self.path} was opened read-only; nothing was written")
        db = self._writer
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise _Busy from exc
            raise StoreError(f"cannot start a write on {self.path}: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"cannot start a write on {self.path}: {exc}") from exc
        return db

    def _roll_back_after(
        self, exc: BaseException, doing: str, *, integrity: LedgerError | None = None
    ) -> None:
        """Roll back the write ``exc`` interrupted and raise what it means for the caller.

        Returns only when ``exc`` is not a driver error; the caller then re-raises it.

        Raises:
            _Busy: Another connection held the lock; retry later.
            LedgerError: ``integrity``, when given and ``exc`` broke a uniqueness rule.
            StoreError: Any other driver error.
        """
        with contextlib.suppress(sqlite3.Error):  # a failed COMMIT may have rolled back
            self._writer.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
            raise _Busy from exc
        if integrity is not None and isinstance(exc, sqlite3.IntegrityError):
            raise integrity from exc
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"{doing} {self.path} failed: {exc}") from exc

    async def _import(self, streams: dict[str, list[RecordedEvent]]) -> int:
        written = await self._between_commits(
            lambda: self._import_now(streams), "nothing was imported, try again"
        )
        if written:
            self._committed.notify()
        return written

    async def _between_commits(self, work: Callable[[], _T], undone: str) -> _T:
        """Run ``work`` on the writer connection between group commits, retried while busy.

        ``work`` opens its own transaction (:meth:`_begin`, which raises :class:`_Busy` while
        another connection holds the write lock) and must not await: from the wait below to its
        end, no append can start on the held connection.

        Raises:
            StoreError: The store is closed.
            StoreUnavailableError: Another writer kept the lock past the budget (``undone``
                says what was not done).
        """
        deadline = time.monotonic() + BUSY_BUDGET_SECONDS
        delay = 0.001
        while True:
            while self._flushing:
                await self._idle.wait()
            if self._closed:
                raise StoreError("the store is closed")
            try:
                return work()
            except _Busy:
                if time.monotonic() + delay > deadline:
                    raise StoreUnavailableError(
                        f"the ledger at {self.path} stayed locked by another writer for "
                        f"{BUSY_BUDGET_SECONDS:.0f} s; {undone}"
                    ) from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.1)

    def _import_now(self, streams: dict[str, list[RecordedEvent]]) -> int:
        """Write checked records in one transaction on the writer connection.

        Raises:
            _Busy: Another connection holds the write lock; nothing was done.
            InvalidInputError: A stored session differs, or an event id is recorded elsewhere.
            StoreError: The transaction failed; nothing was written.
        """
        db = self._begin()
        written = 0
        try:
            for session_id, records in streams.items():
                self._batch.forget(session_id)
                row = db.execute(SELECT_HEAD, {"session_id": session_id}).fetchone()
                version, head_hash = (row[0], row[1]) if row else (0, GENESIS_HASH)
                plan = plan_import(session_id, records, version, head_hash)
                if plan.stored_from:
                    window = {
                        "session_id": session_id,
                        "after": plan.stored_from - 1,
                        "to": plan.stored_to,
                    }
                    plan.check([stored_row(r) for r in db.execute(_READ_WINDOW, window)])
                if not plan.new:
                    continue
                db.executemany(
                    INSERT_FIRST,
                    [
                        (
                            session_id,
                            r.version,
                            str(r.event_id),
                            format_time(r.recorded_at),
                            r.schema_version,
                            r.event_type,
                            r.payload,
                            r.prev_hash,
                            r.hash,
                        )
                        for r in plan.new
                    ],
                )
                db.execute(
                    _IMPORT_HEAD,
                    {
                        "session_id": session_id,
                        "version": plan.new[-1].version,
                        "hash": plan.new[-1].hash,
                        "started_at": format_time(records[0].recorded_at),
                        "updated_at": format_time(plan.new[-1].recorded_at),
                    },
                )
                written += len(plan.new)
            db.execute("COMMIT")
        except BaseException as exc:
            self._roll_back_after(
                exc,
                "import into",
                integrity=InvalidInputError(
                    f"an imported event id is already recorded for another event ({exc})"
                ),
            )
            raise
        return written

    async def _tree_grow(self, old: TreeTip, new: TreeTip, nodes: Sequence[StoredNode]) -> bool:
        # Like an import: between group commits, on the writer connection, retried while busy.
        return await self._between_commits(
            lambda: self._grow_now(old, new, nodes), "the Merkle tree was not extended"
        )

    def _grow_now(self, old: TreeTip, new: TreeTip, nodes: Sequence[StoredNode]) -> bool:
        db = self._begin()
        try:
            moved = grow(db, old, new, nodes)
            db.execute("COMMIT" if moved else "ROLLBACK")
        except BaseException as exc:
            self._roll_back_after(exc, "extend the Merkle tree in")
            raise
        return moved

    async def read_stream(
        self,
        session_id: str,
        *,
        after_version: int = 0,
        to_version: int | None = None,
        limit: int | None = None,
    ) -> list[RecordedEvent]:
        """See :meth:`EventStore.read_stream` (read inline: one indexed range of one session)."""
        check_id(session_id)
        check_window(after_version, to_version, limit)
        params: dict[str, object] = {"session_id": session_id, "after": after_version}
        statement = STATEMENTS["read_stream"]
        if to_version is not None or limit is not None:
            # One statement for every page: the bound and the limit are always bound (-1: none).
            params["to"] = to_version if to_version is not None else _NO_BOUND
            params["limit"] = limit if limit is not None else -1
            params["offset"] = 0
            statement = STATEMENTS["read_stream_page"]
        return decode_rows(self._read(statement, params))

    async def read_all_rows(self, *, after_position: int = 0, limit: int = 1000) -> list[LogRow]:
        """See :meth:`EventStore.read_all_rows` (read inline: an indexed range of positions)."""
        check_page(after_position, limit)
        page: dict[str, object] = {"after": after_position, "limit": limit, "offset": 0}
        return list(map(LogRow._make, self._read(STATEMENTS["read_log_rows"], page)))

    async def stream_head(self, session_id: str) -> StreamHead | None:
        """See :meth:`EventStore.stream_head` (read inline: one row by key)."""
        check_id(session_id)
        rows = self._read(STATEMENTS["session_head"], {"session_id": session_id})
        if not rows:
            return None
        session, version, digest, started_at, updated_at = rows[0]
        return StreamHead(session, version, digest, head_time(started_at), head_time(updated_at))

    def _watch(self, poll_interval: float | None) -> PollingWatch:
        """Subscriptions wake on this store's commits and poll for other processes' commits."""
        return PollingWatch(self._committed, poll_interval or POLL_INTERVAL, self._data_version)

    def _data_version(self) -> int:
        """Return SQLite's count of commits by other connections, the writer's included.

        Read on the reader connection: one look at the shared-memory index, no I/O (-1 once
        the store is closed).

        Raises:
            StoreError: The reader failed.
        """
        if self._closed:
            return -1
        try:
            return int(self._reader.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error as exc:
            raise StoreError(f"read from {self.path} failed: {exc}") from exc

    def _stats_dialect(self) -> "StatsDialect":
        from ledger.store.sqlite.stats import SQLITE_STATS  # imports SQLAlchemy: not on serving

        return SQLITE_STATS

    def _read(self, statement: str, params: dict[str, object]) -> list[Any]:
        if self._closed:
            raise StoreError("the store is closed")
        try:
            return self._reader.execute(statement, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"read from {self.path} failed: {exc}") from exc

    async def aclose(self) -> None:
        """Wait for queued appends to commit, then close the writer and every reader."""
        if self._closed:
            return
        await self._idle.wait()
        self._closed = True
        self._committed.notify()  # subscribers wake, see the store closed, and end
        self._writer.close()
        self._reader.close()
        await self._dispose_engine()


class _Busy(Exception):
    """Another connection holds the write lock."""


__all__ = ["POLL_INTERVAL", "Durability", "SqliteEventStore"]
