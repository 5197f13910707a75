"""The SQL behind :meth:`.Statistics.stats_rows`: two statements, and Python never sees an event.

The first walks ``tl_events`` in (session, version) index order and reduces it to one row of facts
per session: counts by event type, plus three keyed lookups per session (its start event's
metadata, its first and last thought's estimate). The second pairs each thought with the next event
of its session through the (session, version) key and returns a histogram of the time between them
in whole milliseconds, from which the percentiles are read exactly. Both run at once, on two
connections: each database scan runs while the other does.

The statements are written as SQL text, the filters' values always bound (``:since``,
``:agent``...), never written into it: a reading command on SQLite runs them without importing
SQLAlchemy. They are the same on every SQL backend but for a few expressions (how JSON is read, how
times are kept), which each backend supplies as a :class:`StatsDialect` in its own module. The
definitions are those of :mod:`thoughtledger.ledger.store.stats_rows`.
"""

# ruff: noqa: S608  # the SQL joined below is this module's and the dialects' constants; values are bound

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from thoughtledger.ledger.store.search_text import THOUGHT_TYPES_SQL
from thoughtledger.ledger.store.stats_rows import SessionFacts, StatsFilter, StatsRows

if TYPE_CHECKING:
    import sqlalchemy as sa

FetchSql = Callable[[str, Mapping[str, object]], Awaitable[list[Any]]]
"""Runs one statement written as SQL text, with its bound parameters (named ``:name`` in it), on
a reading connection of the store, and returns its rows (the store's ``_fetch_sql``)."""

_STARTED = "SELECT session_id FROM tl_events WHERE version = 1 AND event_type = 'session.started'"
"""The start events, which a session's agent, client and owner are read from."""


class StatsDialect(Protocol):
    """The expressions that differ between SQL backends, as SQL text and as SQLAlchemy Core.

    The ``*_sql`` forms and :meth:`session_facts` serve the statements written as text (the
    statistics, the loop counts, the search's filters); :meth:`json` serves the reads built with
    SQLAlchemy (heads by owner, forks, redactions).
    """

    not_needed_sql: str
    """What ``next_thought_needed`` reads as when it is false, as an SQL literal."""

    def json(self, payload: "sa.ColumnElement[str]", *path: str) -> Any:
        """Return the text at ``path`` in a JSON payload stored as text (SQLAlchemy Core)."""

    def json_sql(self, payload: str, *path: str) -> str:
        """Return the text at ``path`` (constants of ours) in the JSON payload ``payload``."""

    def started_bound(self, moment: datetime) -> object:
        """Return ``moment`` as the tables keep times, to bind and compare with."""

    def day_sql(self, started_at: str) -> str:
        """Return the UTC date (``YYYY-MM-DD``) of a session's start time."""

    def estimate_sql(self, value: str) -> str:
        """Return a ``total_thoughts`` read by :meth:`json_sql` as a whole number."""

    def gap_ms_sql(self, earlier: str, later: str) -> str:
        """Return the time between two recorded times in whole milliseconds."""

    def session_facts(self, rows: Iterable[Sequence[Any]]) -> list[SessionFacts]:
        """Return the facts' statement's rows as :class:`SessionFacts`, typed alike everywhere."""


async def stats_rows(fetch: FetchSql, dialect: StatsDialect, where: StatsFilter) -> StatsRows:
    """Run both statements at once and return their rows.

    Raises:
        StoreError: The backend failed (as ``fetch`` raises it).
    """
    params: dict[str, object] = {}
    facts_sql = _facts_sql(dialect, selected_sessions(dialect, where, "e.session_id", params))
    gaps_sql = _gaps_sql(dialect, selected_sessions(dialect, where, "a.session_id", params))
    facts = asyncio.ensure_future(fetch(facts_sql, params))
    gaps = asyncio.ensure_future(fetch(gaps_sql, params))
    try:
        await asyncio.gather(facts, gaps)
    except BaseException:
        for task in (facts, gaps):
            task.cancel()
        await asyncio.gather(facts, gaps, return_exceptions=True)
        raise
    return StatsRows(dialect.session_facts(facts.result()), {ms: n for ms, n in gaps.result()})


def selected_sessions(
    dialect: StatsDialect, where: StatsFilter, session_id: str, params: dict[str, object]
) -> list[str]:
    """The conditions on the column ``session_id`` (SQL) that keep the sessions ``where`` selects.

    Each filter's value is added to ``params`` under its name (``since``, ``until``, ``agent``,
    ``client``, ``owner``), and the conditions name it bound; a filter not set adds nothing.
    """
    conditions: list[str] = []
    bounds = []
    for name, moment, test in (("since", where.since, ">="), ("until", where.until, "<")):
        if moment is not None:
            bounds.append(f"recorded_at {test} :{name}")
            params[name] = dialect.started_bound(moment)
    if bounds:
        within = " AND ".join(bounds)
        # A session starts with its first event (tl_events_started: the first events by time).
        first = f"SELECT session_id FROM tl_events WHERE version = 1 AND {within}"
        conditions.append(f"{session_id} IN ({first})")
    for name, wanted, path in (
        ("agent", where.agent, ("metadata", "agent")),
        ("client", where.client, ("metadata", "client")),
        ("owner", where.owner, ("owner",)),
    ):
        if wanted is not None:
            field = dialect.json_sql("payload", *path)
            conditions.append(f"{session_id} IN ({_STARTED} AND {field} = :{name})")
            params[name] = wanted
    return conditions


def _facts_sql(dialect: StatsDialect, conditions: list[str]) -> str:
    thought = f"event_type IN ({THOUGHT_TYPES_SQL})"
    # A thought a model wrote is classified by its payload's ``kind``; any other by its type.
    kind = (
        "CASE WHEN event_type = 'thought.generated' THEN "
        f"{dialect.json_sql('payload', 'kind')} ELSE event_type END"
    )
    chosen = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    per_session = (
        "SELECT session_id, count(*) AS events, "
        f"count(*) FILTER (WHERE {thought}) AS thoughts, "
        f"count(*) FILTER (WHERE {kind} = 'thought.revised') AS revisions, "
        f"count(*) FILTER (WHERE {kind} = 'branch.opened') AS branches, "
        f"min(version) FILTER (WHERE {thought}) AS first_v, "
        f"max(version) FILTER (WHERE {thought}) AS last_v "
        f"FROM tl_events AS e{chosen} GROUP BY session_id"
    )

    def at(alias: str, version: str) -> str:
        return (
            f"LEFT OUTER JOIN tl_events AS {alias} ON {alias}.session_id = p.session_id "
            f"AND {alias}.version = {version}"
        )

    # The columns of SessionFacts, in order.
    return (
        f"SELECT p.session_id, {dialect.day_sql('s.recorded_at')}, "
        f"{dialect.json_sql('start.payload', 'metadata', 'agent')}, "
        f"{dialect.json_sql('start.payload', 'metadata', 'client')}, "
        "p.events, p.thoughts, p.revisions, p.branches, "
        f"{dialect.estimate_sql(dialect.json_sql('first.payload', 'total_thoughts'))}, "
        f"{dialect.estimate_sql(dialect.json_sql('last.payload', 'total_thoughts'))}, "
        f"{dialect.json_sql('last.payload', 'next_thought_needed')} = {dialect.not_needed_sql} "
        # s: the session's first event, whatever its type (its start).
        f"FROM ({per_session}) AS p JOIN tl_events AS s ON s.session_id = p.session_id "
        "AND s.version = 1 "
        f"{at('start', '1')} AND start.event_type = 'session.started' "
        f"{at('first', 'p.first_v')} {at('last', 'p.last_v')}"
    )


def _gaps_sql(dialect: StatsDialect, conditions: list[str]) -> str:
    gap = dialect.gap_ms_sql("a.recorded_at", "b.recorded_at")
    chosen = "".join(f" AND {condition}" for condition in conditions)
    return (
        f"SELECT {gap} AS ms, count(*) AS n FROM tl_events AS a JOIN tl_events AS b "
        "ON b.session_id = a.session_id AND b.version = a.version + 1 "
        f"WHERE a.event_type IN ({THOUGHT_TYPES_SQL}) AND b.event_type IN ({THOUGHT_TYPES_SQL})"
        f"{chosen} GROUP BY {gap}"
    )


__all__ = ["FetchSql", "StatsDialect", "selected_sessions", "stats_rows"]
