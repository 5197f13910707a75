"""What the SQL backends share: reads, heads, verification, statistics and the capabilities' glue.

SQLAlchemy is imported on first use, not with this module: the SQLite backend serves its hot path
and its reading commands without it, and a server spawned per conversation should not pay a third
of a second for it.
"""

from abc import abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from thoughtledger.ledger.chain import VerifyReport, verify_rows
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import (
    DEFAULT_MAX_EVENT_BYTES,
    Clock,
    LedgerStore,
    StreamHead,
    utc_now,
)
from thoughtledger.ledger.store.checks import check_page, check_window
from thoughtledger.ledger.store.imports import StoreImports
from thoughtledger.ledger.store.log_tree import TreeRows
from thoughtledger.ledger.store.loop_marks import FoldedMarks
from thoughtledger.ledger.store.redaction import LogRedaction, Redacted, Stripping
from thoughtledger.ledger.store.rows import (
    RowReads,
    decode_rows,
    head_of_row,
    stored_row,
)
from thoughtledger.ledger.store.search import Searching
from thoughtledger.ledger.store.sql_parts import (
    SqlLoopMarks,
    SqlOwners,
    SqlRows,
    SqlSearch,
    SqlStats,
    recent_heads_query,
)
from thoughtledger.ledger.store.stored_forms import id_uuid
from thoughtledger.ledger.store.stored_tree import StoredTree

_ID_CHUNK = 1000
"""Event ids looked up per query (well within every driver's limit on bound parameters)."""

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import AsyncEngine

    from thoughtledger.ledger.store.sql_stats import StatsDialect


class SqlEventStore(LedgerStore):
    """Base of the SQL backends: the reads they share, through one SQLAlchemy :class:`AsyncEngine`.

    Every read of the contract is implemented here with SQLAlchemy Core on the engine; a backend
    overrides those it serves faster another way (SQLite answers one session's stream, its head
    and pages of log rows inline on a held ``sqlite3`` connection, and never builds the engine
    unless a scan needs it). Writes are each backend's own (:meth:`_append`, :meth:`_import`,
    :meth:`_strip`, and its :class:`TreeRows`): PostgreSQL's go through the same engine, SQLite's
    through a held connection of its own.

    Args:
        engine: The engine the shared reads go through, or a function that makes it on first use.
        where: How to name the database in error messages (never carries a password).
        tree_rows: What the backend stores of the Merkle tree (see :class:`StoredTree`).
        read_only: Whether the store was opened for reading only.
    """

    def __init__(
        self,
        engine: "AsyncEngine | Callable[[], AsyncEngine]",
        where: str,
        *,
        tree_rows: TreeRows,
        read_only: bool = False,
        clock: Clock = utc_now,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        super().__init__(clock=clock, max_event_bytes=max_event_bytes)
        self.read_only = read_only
        self.tree = StoredTree(tree_rows, read_only=read_only)
        self._made_engine: AsyncEngine | None = None
        self._make_engine: Callable[[], AsyncEngine] | None = None
        if callable(engine) and not hasattr(engine, "sync_engine"):
            self._make_engine = engine
        else:
            self._made_engine = engine  # type: ignore[assignment]  # an AsyncEngine, not a factory
        self._where = where
        self._closed = False
        self.search: Searching = SqlSearch(
            self._fetch_sql, self._stats_dialect, self._search_dialect(), where_text=where
        )
        self.stats = SqlStats(self._fetch_sql, self._stats_dialect)
        self.owners = SqlOwners(self._fetch, self._stats_dialect)
        self.redaction = LogRedaction(self.read_stream, self._strip, self._redactions)
        self.rows: RowReads = SqlRows(self._fetch, self._visible_below)
        self.loop_marks = SqlLoopMarks(
            self._fetch_sql, self._stats_dialect, self._fold_loop_marks, self._check_writable
        )
        self.imports = StoreImports(
            self,
            self._import,
            self._recorded_event_ids,
            max_event_bytes=max_event_bytes,
            primary=self._primary_reads,
        )

    @property
    def _engine(self) -> "AsyncEngine":
        if self._made_engine is None:
            assert self._make_engine is not None  # noqa: S101  # one of the two is always set
            self._made_engine = self._make_engine()
        return self._made_engine

    async def _dispose_engine(self) -> None:
        if self._made_engine is not None:
            await self._made_engine.dispose()

    def _visible_below(self) -> "sa.ColumnElement[bool] | None":
        """Return a condition limiting :meth:`read_all` to positions no commit can still precede."""
        return None

    async def read_stream(
        self,
        session_id: str,
        *,
        after_version: int = 0,
        to_version: int | None = None,
        limit: int | None = None,
    ) -> list[RecordedEvent]:
        """See :meth:`.EventStore.read_stream`."""
        import sqlalchemy as sa

        from thoughtledger.ledger.store.schema import events as EVENTS

        check_id(session_id)
        check_window(after_version, to_version, limit)
        query = sa.select(EVENTS).where(
            EVENTS.c.session_id == session_id, EVENTS.c.version > after_version
        )
        if to_version is not None:
            query = query.where(EVENTS.c.version <= to_version)
        query = query.order_by(EVENTS.c.version)
        if limit is not None:
            query = query.limit(limit)
        return decode_rows(await self._fetch(query))

    async def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """See :meth:`.EventStore.read_all`."""
        import sqlalchemy as sa

        from thoughtledger.ledger.store.schema import events as EVENTS

        check_page(after_position, limit)
        query = sa.select(EVENTS).where(EVENTS.c.position > after_position)
        visible = self._visible_below()
        if visible is not None:
            query = query.where(visible)
        return decode_rows(await self._fetch(query.order_by(EVENTS.c.position).limit(limit)))

    async def stream_head(self, session_id: str) -> StreamHead | None:
        """See :meth:`.EventStore.stream_head` (the session's first and last events, by key)."""
        from thoughtledger.ledger.store.heads_sql import heads_select

        check_id(session_id)
        query, first = heads_select()
        rows = await self._fetch(query.where(first.c.session_id == session_id))
        return head_of_row(rows[0]) if rows else None

    async def version_at(self, session_id: str, position: int) -> int:
        """See :meth:`.EventStore.version_at` (the session's index on version, bounded)."""
        import sqlalchemy as sa

        from thoughtledger.ledger.store.schema import events as EVENTS

        query = sa.select(sa.func.coalesce(sa.func.max(EVENTS.c.version), 0)).where(
            EVENTS.c.session_id == session_id, EVENTS.c.position <= position
        )
        return int((await self._fetch(query))[0][0])

    async def list_heads(
        self, *, after_session_id: str | None = None, limit: int = 1000
    ) -> list[StreamHead]:
        """See :meth:`.EventStore.list_heads` (first events by id: ``tl_events_first``)."""
        from thoughtledger.ledger.store.heads_sql import heads_select

        check_page(0, limit)
        query, first = heads_select()
        query = query.order_by(first.c.session_id).limit(limit)
        if after_session_id is not None:
            query = query.where(first.c.session_id > after_session_id)
        return [head_of_row(row) for row in await self._fetch(query)]

    async def recent_heads(
        self, *, before: tuple[datetime, str] | None = None, limit: int = 100
    ) -> list[StreamHead]:
        """See :meth:`.EventStore.recent_heads`."""
        check_page(0, limit)
        query = recent_heads_query(self._stats_dialect(), owner=None, before=before, limit=limit)
        return [head_of_row(row) for row in await self._fetch(query)]

    async def fork_heads(self, session_id: str) -> list[StreamHead]:
        """See :meth:`.EventStore.fork_heads`."""
        import sqlalchemy as sa

        from thoughtledger.ledger.store.heads_sql import heads_select
        from thoughtledger.ledger.store.schema import events as EVENTS

        check_id(session_id)
        dialect = self._stats_dialect()
        # Indexed where it is written (schema step 9), like the owner.
        forks = sa.select(EVENTS.c.session_id).where(
            EVENTS.c.event_type == "session.started",
            dialect.json(EVENTS.c.payload, "fork_of") == session_id,
        )
        query, first = heads_select()
        query = query.where(first.c.session_id.in_(forks)).order_by(
            first.c.recorded_at, first.c.session_id
        )
        return [head_of_row(row) for row in await self._fetch(query)]

    async def recorded_heads(self) -> dict[str, tuple[int, str]]:
        """See :meth:`.EventStore.recorded_heads` (the rows of ``tl_sessions``)."""
        import sqlalchemy as sa

        from thoughtledger.ledger.store.schema import sessions as SESSIONS

        rows = await self._fetch(
            sa.select(SESSIONS.c.session_id, SESSIONS.c.version, SESSIONS.c.hash)
        )
        return {row.session_id: (row.version, row.hash) for row in rows}

    async def verify(self, session_id: str) -> VerifyReport:
        """See :meth:`.EventStore.verify`."""
        import sqlalchemy as sa

        from thoughtledger.ledger.store.schema import events as EVENTS
        from thoughtledger.ledger.store.schema import sessions as SESSIONS

        check_id(session_id)
        rows = await self._fetch(
            sa.select(EVENTS).where(EVENTS.c.session_id == session_id).order_by(EVENTS.c.version)
        )
        # Since schema step 19 only a head row that disagreed with the log at the upgrade is
        # left (a tail cut before it); before it, every session has one.
        heads = await self._fetch(
            sa.select(SESSIONS.c.version, SESSIONS.c.hash).where(
                SESSIONS.c.session_id == session_id
            )
        )
        head = (heads[0].version, heads[0].hash) if heads else None
        return verify_rows(session_id, (stored_row(row) for row in rows), head)

    # -- capabilities: imports, loop marks, and what `redaction` runs on ----------------------

    @abstractmethod
    async def _import(self, streams: dict[str, list[RecordedEvent]]) -> int:
        """Store checked records atomically, for :attr:`imports` (see :class:`.Importing`).

        For each session: read the stored head, :func:`.plan_import`, read the stored rows the plan
        names and :meth:`.ImportPlan.check` them, then write ``plan.new``; all in one transaction.
        """

    def _primary_reads(self) -> AbstractContextManager[object]:
        """A block within which reads go where writes go (with a standby: the primary)."""
        return nullcontext()

    async def _recorded_event_ids(self, event_ids: Collection[UUID]) -> set[UUID]:
        """Which of ``event_ids`` are stored, for :attr:`imports` (the unique index, in chunks)."""
        import sqlalchemy as sa

        from thoughtledger.ledger.store.schema import events as EVENTS

        wanted = sorted({str(event_id) for event_id in event_ids})
        found: set[UUID] = set()
        for start in range(0, len(wanted), _ID_CHUNK):
            chunk = [
                form for text in wanted[start : start + _ID_CHUNK] for form in self._id_forms(text)
            ]
            # Untyped: the driver takes each form as it is (SQLite holds two in one column).
            ids = sa.bindparam("ids", chunk, expanding=True, type_=sa.types.NullType())
            rows = await self._fetch(sa.select(EVENTS.c.event_id).where(EVENTS.c.event_id.in_(ids)))
            found.update(id_uuid(row[0]) for row in rows)
        return found

    def _id_forms(self, text: str) -> tuple[object, ...]:
        """The values an event id may be stored as (PostgreSQL: a ``uuid``; SQLite overrides)."""
        return (UUID(text),)

    def _search_dialect(self) -> str:
        """The backend's name in :func:`.search_text.search_statement` (SQLite overrides)."""
        return "postgresql"

    def _check_writable(self, undone: str) -> None:
        """Raise unless the store is open and writable (``undone`` says what was not done).

        Raises:
            StoreError: The store is closed or was opened read-only.
        """
        if self._closed:
            raise StoreError("the store is closed")
        if self.read_only:
            raise StoreError(f"{self._where} was opened read-only; {undone}")

    @abstractmethod
    async def _fold_loop_marks(self, through: int, to: int, folded: Sequence[FoldedMarks]) -> bool:
        """Write a fold's marks and move the position, in one transaction, if still ``through``."""

    @abstractmethod
    async def _strip(self, changes: Sequence[Stripping], *, vacuum: bool) -> int:
        """Replace each payload still stored as ``old`` by ``new``, atomically; return how many.

        What :attr:`redaction` runs once the shared rules chose the changes.

        Raises:
            StoreError: The backend failed (or is read-only); nothing was changed.
        """

    async def _redactions(self, session_id: str) -> tuple[Redacted, ...]:
        """A session's redactions for :attr:`redaction`, from the partial index of them."""
        import sqlalchemy as sa

        from thoughtledger.ledger.store.schema import events as EVENTS

        check_id(session_id)
        named = sa.cast(self._stats_dialect().json(EVENTS.c.payload, "version"), sa.BigInteger)
        rows = await self._fetch(
            sa.select(EVENTS.c.version, named)
            .where(EVENTS.c.session_id == session_id, EVENTS.c.event_type == "thought.redacted")
            .order_by(EVENTS.c.version)
        )
        return tuple(map(Redacted._make, rows))

    @abstractmethod
    def _stats_dialect(self) -> "StatsDialect":
        """Return the backend's expressions in the statistics' statements."""

    async def _fetch_sql(self, statement: str, params: Mapping[str, object]) -> list[Any]:
        """Run one statement written as SQL text (values bound as ``:name``) through the engine.

        Raises:
            StoreError: The store is closed, or the read failed.
        """
        import sqlalchemy as sa

        text = sa.text(statement)
        return await self._fetch(text.bindparams(**params) if params else text)

    async def _fetch(self, query: "sa.Executable") -> "list[sa.Row[Any]]":
        import sqlalchemy as sa

        if self._closed:
            raise StoreError("the store is closed")
        try:
            async with self._engine.connect() as connection:
                result = await connection.execute(query)
                return list(result.all())
        except sa.exc.DBAPIError as exc:
            raise StoreError(f"read from {self._where} failed: {exc.orig}") from exc
        except OSError as exc:
            raise StoreError(f"read from {self._where} failed: {exc}") from exc


__all__ = ["SqlEventStore"]
