"""The capabilities of the SQL backends as objects of their own, over a store's reads.

Each takes what it runs on from its store (the reading connection's ``fetch``, the backend's SQL
dialect, the backend's own write). Search, statistics and loop marks run statements written as
SQL text (see :mod:`.ledger.store.sql_stats`), which import no SQLAlchemy; the rest import it only
when called: the SQLite backend serves its hot path and its reading commands without it.
"""

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from thoughtledger.ledger.envelope import EventRow, LogRow
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.search_query import SearchQuery
from thoughtledger.ledger.store.base import StreamHead
from thoughtledger.ledger.store.checks import check_page
from thoughtledger.ledger.store.loop_marks import (
    FoldedMarks,
    LoopCounts,
    LoopMark,
    LoopMarking,
    check_folded,
)
from thoughtledger.ledger.store.owners import Owners
from thoughtledger.ledger.store.rows import (
    RowReads,
    event_row,
    head_of_row,
    log_row,
    session_versions_sql,
    types_in,
)
from thoughtledger.ledger.store.search import SearchFilter, SearchHit, Searching, check_search_page
from thoughtledger.ledger.store.stats_rows import Statistics, StatsFilter, StatsRows

if TYPE_CHECKING:
    import sqlalchemy as sa

    from thoughtledger.ledger.store.sql_stats import FetchSql, StatsDialect

    Fetch = Callable[[sa.Executable], Awaitable[list[sa.Row[Any]]]]


class SqlSearch(Searching):
    """The search of the SQL backends: their full-text index (a store's ``search``).

    The index is schema step 9's (see :mod:`thoughtledger.ledger.store.search_index`); on
    SQLite the thoughts it has not taken in yet are matched too (see
    :mod:`thoughtledger.ledger.store.sql_search`).

    Args:
        fetch: Runs one statement written as SQL text on a reading connection of the store.
        dialect: Returns the backend's SQL for the filters.
        backend: The backend's name in :func:`.search_text.search_statement`.
        where_text: How to name the database in error messages.
    """

    def __init__(
        self,
        fetch: "FetchSql",
        dialect: "Callable[[], StatsDialect]",
        backend: str,
        *,
        where_text: str,
    ) -> None:
        self._fetch = fetch
        self._dialect = dialect
        self._backend = backend
        self._where_text = where_text

    async def search(
        self,
        query: SearchQuery,
        where: SearchFilter | None = None,
        *,
        limit: int = 20,
        offset: int = 0,
    ) -> list[SearchHit]:
        """See :meth:`Searching.search`."""
        from thoughtledger.ledger.store.sql_search import search_hits

        check_search_page(limit, offset)
        return await search_hits(
            self._fetch,
            self._dialect(),
            self._backend,
            query,
            where or SearchFilter(),
            limit=limit,
            offset=offset,
            where_text=self._where_text,
        )


class SqlStats(Statistics):
    """The statistics of the SQL backends, computed in the database (a store's ``stats``).

    Args:
        fetch: Runs one statement written as SQL text on a reading connection of the store.
        dialect: Returns the backend's SQL for the statements.
    """

    def __init__(self, fetch: "FetchSql", dialect: "Callable[[], StatsDialect]") -> None:
        self._fetch = fetch
        self._dialect = dialect

    async def stats_rows(self, where: StatsFilter | None = None) -> StatsRows:
        """See :meth:`Statistics.stats_rows` (two statements, see :mod:`.sql_stats`)."""
        from thoughtledger.ledger.store.sql_stats import stats_rows

        return await stats_rows(self._fetch, self._dialect(), where or StatsFilter())


class SqlRows(RowReads):
    """Pages of the log's rows read with SQLAlchemy Core (the SQL backends' ``rows``).

    Args:
        fetch: Runs one statement on a reading connection of the store.
        visible_below: The backend's condition limiting reads of the log (``None``: none).
    """

    def __init__(
        self,
        fetch: "Fetch",
        visible_below: "Callable[[], sa.ColumnElement[bool] | None]",
    ) -> None:
        self._fetch = fetch
        self._visible_below = visible_below

    async def read_all_rows(self, *, after_position: int = 0, limit: int = 1000) -> list[LogRow]:
        """See :meth:`.RowReads.read_all_rows`."""
        rows = await self._page((*LogRow._fields,), after_position, limit)
        return [log_row(row) for row in rows]

    async def read_all_event_rows(
        self, *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """See :meth:`.RowReads.read_all_event_rows`."""
        return [event_row(row) for row in await self._page(None, after_position, limit)]

    async def read_event_rows_of_types(
        self, event_types: Sequence[str], *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """See :meth:`.RowReads.read_event_rows_of_types`."""
        import sqlalchemy as sa

        typed = sa.text(f"tl_events.event_type IN {types_in(event_types)}")
        return [event_row(row) for row in await self._page(None, after_position, limit, typed)]

    async def session_versions_of_types(
        self, session_id: str, event_types: Sequence[str], *, to_version: int
    ) -> list[int]:
        """See :meth:`.RowReads.session_versions_of_types`."""
        import sqlalchemy as sa

        check_id(session_id)
        statement = sa.text(session_versions_sql(event_types))
        rows = await self._fetch(statement.bindparams(session_id=session_id, to_version=to_version))
        return [version for (version,) in rows]

    async def _page(
        self,
        columns: tuple[str, ...] | None,
        after_position: int,
        limit: int,
        where: "sa.ColumnElement[bool] | sa.TextClause | None" = None,
    ) -> "list[sa.Row[Any]]":
        """One page of the log's rows (``columns``, or every column), in position order.

        Raises:
            InvalidInputError: A negative position or a limit below 1.
            StoreError: The read failed.
        """
        import sqlalchemy as sa

        from thoughtledger.ledger.store.schema import events as EVENTS

        check_page(after_position, limit)
        chosen = EVENTS.c if columns is None else [EVENTS.c[name] for name in columns]
        query = sa.select(*chosen).where(EVENTS.c.position > after_position)
        if where is not None:
            query = query.where(where)
        visible = self._visible_below()
        if visible is not None:
            query = query.where(visible)
        return await self._fetch(query.order_by(EVENTS.c.position).limit(limit))


class SqlLoopMarks(LoopMarking):
    """The loop marks of the SQL backends: read with SQL, written by the backend (``loop_marks``).

    Args:
        fetch: Runs one statement written as SQL text on a reading connection of the store.
        dialect: Returns the backend's SQL for the statistics' filters.
        fold: The backend's write of a fold (one transaction, guarded by the position).
        check_writable: Raises unless the store is open and writable (given what was not done).
        read_marks: Reads a session's marks another way (SQLite: inline); ``None``: with SQL.
        read_through: Reads the position another way (SQLite: inline); ``None``: with SQL.
    """

    def __init__(
        self,
        fetch: "FetchSql",
        dialect: "Callable[[], StatsDialect]",
        fold: Callable[[int, int, Sequence[FoldedMarks]], Awaitable[bool]],
        check_writable: Callable[[str], None],
        *,
        read_marks: Callable[[str], Awaitable[list[LoopMark]]] | None = None,
        read_through: Callable[[], Awaitable[int]] | None = None,
    ) -> None:
        self._fetch = fetch
        self._dialect = dialect
        self._fold = fold
        self._check_writable = check_writable
        self._read_marks = read_marks
        self._read_through = read_through

    async def loop_marks(self, session_id: str) -> list[LoopMark]:
        """See :meth:`LoopMarking.loop_marks`."""
        check_id(session_id)
        if self._read_marks is not None:
            return await self._read_marks(session_id)
        from thoughtledger.ledger.store.loop_sql import read_marks

        return await read_marks(self._fetch, session_id)

    async def loops_through(self) -> int:
        """See :meth:`LoopMarking.loops_through`."""
        if self._read_through is not None:
            return await self._read_through()
        from thoughtledger.ledger.store.loop_sql import read_through

        return await read_through(self._fetch)

    async def loop_counts(self, where: StatsFilter | None = None) -> LoopCounts | None:
        """See :meth:`LoopMarking.loop_counts` (three short statements, see ``loop_sql``)."""
        from thoughtledger.ledger.store.loop_sql import count_marks

        return await count_marks(self._fetch, self._dialect(), where or StatsFilter())

    async def fold_loop_marks(self, through: int, to: int, folded: Sequence[FoldedMarks]) -> bool:
        """See :meth:`LoopMarking.fold_loop_marks`."""
        checked = check_folded(through, to, folded)
        self._check_writable("no loop marks were written")
        return await self._fold(through, to, checked)


class SqlOwners(Owners):
    """One principal's sessions in the SQL backends, from the owner's index (``owners``).

    Args:
        fetch: Runs one statement on a reading connection of the store.
        dialect: Returns the backend's SQL for reading a payload's field.
    """

    def __init__(self, fetch: "Fetch", dialect: "Callable[[], StatsDialect]") -> None:
        self._fetch = fetch
        self._dialect = dialect

    async def owned_heads(
        self,
        owner: str,
        *,
        before: tuple[datetime, str] | None = None,
        limit: int = 100,
    ) -> list[StreamHead]:
        """See :meth:`Owners.owned_heads` (the index on each start event's owner)."""
        check_page(0, limit)
        query = recent_heads_query(self._dialect(), owner=owner, before=before, limit=limit)
        return [head_of_row(row) for row in await self._fetch(query)]


def recent_heads_query(
    dialect: "StatsDialect",
    *,
    owner: str | None,
    before: tuple[datetime, str] | None,
    limit: int,
) -> "sa.Select[Any]":
    """Session heads newest first (by start time, then id), before a key; of one owner's only.

    ``owner`` ``None``: every session, from ``tl_events_started`` (the first events by time).
    The owner is read from the session's start event, which ``tl_events_owner`` indexes on
    exactly this expression, so one owner's page is an index lookup, never a scan of every head.
    """
    import sqlalchemy as sa

    from thoughtledger.ledger.store.heads_sql import heads_select

    query, first = heads_select()
    if owner is not None:
        # The owner's index: its condition and expression, on the first events themselves.
        query = query.where(
            first.c.event_type == "session.started",
            dialect.json(first.c.payload, "owner") == owner,
        )
    started_at, session = first.c.recorded_at, first.c.session_id
    if before is not None:
        moment, session_id = dialect.started_bound(before[0]), before[1]
        query = query.where(
            sa.or_(started_at < moment, sa.and_(started_at == moment, session < session_id))
        )
    return query.order_by(started_at.desc(), session.desc()).limit(limit)


__all__ = [
    "SqlLoopMarks",
    "SqlOwners",
    "SqlRows",
    "SqlSearch",
    "SqlStats",
    "recent_heads_query",
]
