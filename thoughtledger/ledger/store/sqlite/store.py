"""The SQLite backend: the embedded default.

Writes bypass the async driver on purpose. In WAL mode with ``synchronous=NORMAL`` a commit is a
few ``write()`` calls and no ``fsync``, cheaper (tens of microseconds) than a single hop to a driver
thread and back; so appends are queued, and one callback on the event loop commits every queued
append in one transaction (group commit) on a held connection with pre-compiled statements. Each
caller learns its own outcome: a batch of appends to distinct sessions, each at the version it
expects, is written with one ``executemany`` call, anything else one append at a time, and a
reused event id sends the batch back through with a savepoint per append. When the database is
busy (another process writing) the commit is retried with a growing, bounded delay that never
blocks the loop.
With ``durability="full"`` every commit also waits for ``fsync``: on the loop while that takes
under 2 ms, on a worker thread from the first commit that takes longer (a slow disk must not stall
every other task).

Short reads run inline on a held reader connection (see
:mod:`thoughtledger.ledger.store.sqlite.reads`); the statistics, searches and loop counts, written
as SQL text, run in worker threads on connections of their own (see
:mod:`thoughtledger.ledger.store.sqlite.scans`); the other reads go through SQLAlchemy's async
engine on aiosqlite, made at their first use. WAL lets every reader run beside the writer. Opened
read-only (see :mod:`thoughtledger.ledger.store.sqlite.readonly`), the store has no writer: one
connection that refuses writes serves the short reads, and scans use more like it.
"""

import asyncio
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from thoughtledger.ledger.chain import PreparedEvent, VerifyReport
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import (
    InvalidInputError,
    StoreError,
    StoreUnavailableError,
)
from thoughtledger.ledger.store.base import DEFAULT_MAX_EVENT_BYTES, Clock, StreamHead, utc_now
from thoughtledger.ledger.store.loop_marks import FoldedMarks, LoopMark
from thoughtledger.ledger.store.redaction import Redacted, Stripping
from thoughtledger.ledger.store.sql import SqlEventStore
from thoughtledger.ledger.store.sql_parts import SqlLoopMarks
from thoughtledger.ledger.store.sqlite.batch import (
    BatchWriter,
    Outcome,
    Rejected,
    Request,
)
from thoughtledger.ledger.store.sqlite.commit_place import CommitPlace
from thoughtledger.ledger.store.sqlite.imports import import_streams
from thoughtledger.ledger.store.sqlite.log_tree import SqliteTree
from thoughtledger.ledger.store.sqlite.loop_writes import THROUGH as LOOPS_THROUGH
from thoughtledger.ledger.store.sqlite.loop_writes import fold_loop_marks
from thoughtledger.ledger.store.sqlite.readonly import connect_read_only
from thoughtledger.ledger.store.sqlite.reads import POLL_INTERVAL, SqliteReader
from thoughtledger.ledger.store.sqlite.redact import strip
from thoughtledger.ledger.store.sqlite.scans import SqliteScans
from thoughtledger.ledger.store.sqlite.search_follow import SearchFollower
from thoughtledger.ledger.store.sqlite.setup import (
    BUSY_BUDGET_SECONDS,
    Durability,
    configure,
    connect_writer,
    migrate,
    reader_engine,
    refuse_foreign,
)
from thoughtledger.ledger.store.sqlite.statements import DATABASE_SCHEMA_VERSION
from thoughtledger.ledger.store.sqlite.writer import Busy, SqliteWriter
from thoughtledger.ledger.store.stored_forms import id_bytes
from thoughtledger.ledger.store.subscribe import PollingWatch

if TYPE_CHECKING:
    from thoughtledger.ledger.store.sql_stats import StatsDialect


_LOOP_MARKS = (
    "SELECT version, repeats_version, similarity FROM tl_loops WHERE session_id = ? "
    "ORDER BY version"
)
_VERSION_AT = (
    "SELECT coalesce(max(version), 0) FROM tl_events WHERE session_id = ? AND position <= ?"
)


@dataclass(slots=True)
class _Batch:
    requests: list[Request] = field(default_factory=list)
    deadline: float = 0.0
    delay: float = 0.001


class SqliteEventStore(SqlEventStore):
    """An event store in one SQLite file (WAL mode). Open it with :meth:`open`.

    Built from parts: the held writer connection (:class:`SqliteWriter`), the held reader
    connection and the reads it answers inline (:class:`SqliteReader`), and the Merkle tree's rows
    on the two (:class:`SqliteTree`); imports and redactions are functions run on the writer.

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
        # Short reads (one session's stream, its head) run inline on this connection: cheaper than
        # a hop to a driver thread, like the writer's commits. Scans go through the engine.
        self._reader = SqliteReader(reader, path)
        self._writer = SqliteWriter(writer, path, read_only=read_only)
        self._scans = SqliteScans(uri, path)
        super().__init__(
            lambda: reader_engine(uri),
            str(path),
            tree_rows=SqliteTree(self._reader, self._writer),
            read_only=read_only,
            clock=clock,
            max_event_bytes=max_event_bytes,
        )
        self.rows = self._reader  # pages of rows read inline: an indexed range of positions
        self.loop_marks = SqlLoopMarks(
            self._fetch_sql,
            self._stats_dialect,
            self._fold_loop_marks,
            self._check_writable,
            read_marks=self._loop_marks_inline,
            read_through=self._loops_through_inline,
        )
        self.path = path
        self.durability: Durability = durability
        self._pending: list[Request] = []
        self._batch = BatchWriter()
        self._commit_place = CommitPlace()
        self._follow = None if read_only else SearchFollower(self._writer)

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
        progress: Callable[[str, int, int], None] | None = None,
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
            progress: Told how an upgrade that goes through the whole log goes (indexing an
                older ledger's thoughts for search): what it does, events done, events in all.

        Returns:
            The open store.

        Raises:
            InvalidInputError: ``durability`` is not ``"normal"`` or ``"full"``.
            StoreUnavailableError: The file cannot be created or opened.
            LedgerNotFoundError: ``read_only``, and there is no file at ``path``.
            NotALedgerError: The file is not an SQLite database, or holds another
                application's tables and no ledger (``read_only``: or any file but a ledger).
            SchemaVersionError: The database was written by a newer thoughtledger
                (``read_only``: or an older one).
        """
        if durability not in ("normal", "full"):
            raise InvalidInputError(f"durability must be 'normal' or 'full', got {durability!r}")
        if read_only:
            file, reader, uri, version = connect_read_only(Path(path))
            reading = cls(
                file,
                reader,
                reader,
                uri=uri,
                read_only=True,
                durability=durability,
                clock=clock,
                max_event_bytes=max_event_bytes,
            )
            reading.stored_schema_version = version
            return reading
        file, writer = connect_writer(Path(path))
        try:
            refuse_foreign(writer, file)
            await configure(writer, durability)
            await migrate(writer, file, progress)
        except BaseException:
            writer.close()
            raise
        reader = sqlite3.connect(file, isolation_level=None, check_same_thread=False)
        reader.execute("PRAGMA query_only = 1")
        reader.execute("PRAGMA busy_timeout = 1000")  # WAL readers wait only in rare recoveries
        store = cls(
            file,
            writer,
            reader,
            uri=file.resolve().as_uri(),
            read_only=False,
            durability=durability,
            clock=clock,
            max_event_bytes=max_event_bytes,
        )
        store.stored_schema_version = DATABASE_SCHEMA_VERSION  # migrate() brought it there
        assert store._follow is not None  # noqa: S101  # a writable store always has one
        store._follow.catch_up_soon()
        return store

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
        writer = self._writer
        if not writer.flushing:
            writer.flushing = True
            writer.idle.clear()
            loop.call_soon(self._flush, _Batch(deadline=time.monotonic() + BUSY_BUDGET_SECONDS))
        return await future

    def _flush(self, batch: _Batch) -> None:
        # Requests that arrived while this batch waited for the lock ride along with it.
        batch.requests.extend(self._pending)
        self._pending = []
        if self._commit_place.in_thread:
            asyncio.get_running_loop().create_task(self._flush_in_thread(batch))
            return
        try:
            outcomes = self._timed_transact(batch.requests)
        except Busy:
            self._retry_later(batch)
            return
        except StoreError as exc:
            outcomes = [Outcome(error=exc) for _ in batch.requests]
        self._settle(batch.requests, outcomes)

    def _timed_transact(self, requests: list[Request]) -> list[Outcome]:
        """:meth:`_transact`, its time told to the commit place (at full durability).

        Raises:
            Busy: Another connection holds the write lock; nothing was done.
            StoreError: The transaction failed; nothing was written.
        """
        if self.durability != "full":
            return self._transact(requests)
        started = time.perf_counter()
        try:
            return self._transact(requests)
        finally:
            self._commit_place.note(time.perf_counter() - started)

    async def _flush_in_thread(self, batch: _Batch) -> None:
        try:
            outcomes = await asyncio.to_thread(self._timed_transact, batch.requests)
        except Busy:
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
            if self._follow is not None:
                self._follow.after_commit()
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
            self._writer.flushing = False
            self._writer.idle.set()

    def _transact(self, requests: list[Request], *, isolate: bool = False) -> list[Outcome]:
        """Commit every request that passes its version check in one transaction.

        Without ``isolate`` no savepoints are taken: a refused request has written nothing by the
        time it is refused, except on a reused event id, which rolls the batch back and redoes it
        with a savepoint per request so that only the offender fails.

        Raises:
            Busy: Another connection holds the write lock; nothing was done.
            StoreError: The transaction failed; nothing was written.
        """
        db = self._writer.begin()
        try:
            outcomes = self._batch.apply(db, requests, self._now(), isolate=isolate)
            if self._follow is not None:
                self._follow.in_append(db, sum(len(request.prepared) for request in requests))
            db.execute("COMMIT")
        except Rejected as rejected:
            db.execute("ROLLBACK")
            if len(requests) > 1:
                return self._transact(requests, isolate=True)
            return [Outcome(error=rejected.error)]
        except BaseException as exc:
            self._writer.roll_back_after(exc, "write to")
            raise
        return outcomes

    async def _import(self, streams: dict[str, list[RecordedEvent]]) -> int:
        written = await import_streams(self._writer, streams)
        if written:
            self._committed.notify()
        return written

    async def _fold_loop_marks(self, through: int, to: int, folded: Sequence[FoldedMarks]) -> bool:
        return await fold_loop_marks(self._writer, through, to, folded)

    async def _strip(self, changes: Sequence[Stripping], *, vacuum: bool) -> int:
        # SQLite always reclaims: the write-ahead log is emptied after every strip.
        return await strip(self._writer, changes)

    # -- reads inline on the held reader connection (see SqliteReader) ---------------------------

    async def read_stream(
        self,
        session_id: str,
        *,
        after_version: int = 0,
        to_version: int | None = None,
        limit: int | None = None,
    ) -> list[RecordedEvent]:
        """See :meth:`EventStore.read_stream` (read inline: one indexed range of one session)."""
        return await self._reader.read_stream(
            session_id, after_version=after_version, to_version=to_version, limit=limit
        )

    async def stream_head(self, session_id: str) -> StreamHead | None:
        """See :meth:`EventStore.stream_head` (read inline: one row by key)."""
        return await self._reader.stream_head(session_id)

    async def list_heads(
        self, *, after_session_id: str | None = None, limit: int = 1000
    ) -> list[StreamHead]:
        """See :meth:`EventStore.list_heads` (read inline: an indexed range of session ids)."""
        return await self._reader.list_heads(after_session_id=after_session_id, limit=limit)

    async def version_at(self, session_id: str, position: int) -> int:
        """See :meth:`EventStore.version_at` (read inline: the session's index, bounded)."""
        return int(self._reader.read(_VERSION_AT, (session_id, position))[0][0])

    async def verify(self, session_id: str) -> VerifyReport:
        """See :meth:`EventStore.verify` (read inline: the session's rows, then its head)."""
        return await self._reader.verify(session_id)

    async def recorded_heads(self) -> dict[str, tuple[int, str]]:
        """See :meth:`EventStore.recorded_heads` (read inline: normally no row)."""
        return await self._reader.recorded_heads()

    async def recent_heads(
        self, *, before: tuple[datetime, str] | None = None, limit: int = 100
    ) -> list[StreamHead]:
        """See :meth:`EventStore.recent_heads` (read inline: the first events by start)."""
        return await self._reader.recent_heads(before=before, limit=limit)

    async def fork_heads(self, session_id: str) -> list[StreamHead]:
        """See :meth:`EventStore.fork_heads` (read inline, from the index of forks)."""
        return await self._reader.fork_heads(session_id)

    async def _loops_through_inline(self) -> int:
        """The marks' position for :attr:`loop_marks` (read inline: one row by key)."""
        try:
            rows = self._reader.read(LOOPS_THROUGH, ())
        except StoreError as exc:
            if "tl_loops_through" in str(exc):  # an older ledger opened read-only
                return 0
            raise
        return int(rows[0][0]) if rows else 0

    async def _loop_marks_inline(self, session_id: str) -> list[LoopMark]:
        """A session's marks for :attr:`loop_marks` (read inline: one indexed range)."""
        return list(map(LoopMark._make, self._reader.read(_LOOP_MARKS, (session_id,))))

    async def _redactions(self, session_id: str) -> tuple[Redacted, ...]:
        """A session's redactions for :attr:`redaction` (read inline, from the partial index)."""
        return await self._reader.redactions(session_id)

    def _watch(self, poll_interval: float | None) -> PollingWatch:
        """Subscriptions wake on this store's commits and poll for other processes' commits."""
        return PollingWatch(
            self._committed, poll_interval or POLL_INTERVAL, self._reader.data_version
        )

    def _id_forms(self, text: str) -> tuple[object, ...]:
        """An event id is stored as its bytes (schema step 18), or as text written before it."""
        return (id_bytes(text), text)

    def _search_dialect(self) -> str:
        return "sqlite"

    def _stats_dialect(self) -> "StatsDialect":
        from thoughtledger.ledger.store.sqlite.stats_dialect import SQLITE_STATS

        return SQLITE_STATS

    async def _fetch_sql(self, statement: str, params: Mapping[str, object]) -> list[Any]:
        """Run a statement written as SQL text in a worker thread (see :class:`SqliteScans`).

        Raises:
            StoreError: The store is closed, or the read failed.
        """
        if self._closed:
            raise StoreError("the store is closed")
        return await self._scans.fetch(statement, params)

    async def aclose(self) -> None:
        """Wait for queued appends to commit, then close the writer and every reader."""
        if self._closed:
            return
        if self._follow is not None:
            await self._follow.close()
        await self._writer.idle.wait()
        self._closed = True
        self._committed.notify()  # subscribers wake, see the store closed, and end
        self._writer.close()
        self._reader.close()
        self._scans.close()
        await self._dispose_engine()


__all__ = ["POLL_INTERVAL", "Durability", "SqliteEventStore"]
