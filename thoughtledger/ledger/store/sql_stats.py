"""The SQL behind :meth:`.Statistics.stats_rows`: two statements, and Python never sees an event.

The first walks ``tl_events`` in (session, version) index order and reduces it to one row of facts
per session: counts by event type, plus three keyed lookups per session (its start event's
metadata, its first and last thought's estimate). The second pairs each thought with the next event
of its session through the (session, version) key and returns a histogram of the time between them
in whole milliseconds, from which the percentiles are read exactly. Both run at once, on two
connections: each database scan runs while the other does.

The statements are the same on every SQL backend but for a few expressions (how JSON is read, how
times are kept), which each backend supplies as a :class:`StatsDialect` in its own module. The
definitions are those of :mod:`thoughtledger.ledger.store.stats_rows`.
"""

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Protocol

import sqlalchemy as sa

from thoughtledger.ledger.events import THOUGHT_TYPES
from thoughtledger.ledger.store import schema
from thoughtledger.ledger.store.stats_rows import SessionFacts, StatsFilter, StatsRows

_E = schema.events
_S = schema.sessions
_THOUGHTS = sorted(THOUGHT_TYPES)

Fetch = Callable[["sa.Select[Any]"], Awaitable[list["sa.Row[Any]"]]]


class StatsDialect(Protocol):
    """The expressions of the statistics' statements that differ between SQL backends."""

    not_needed: object
    """What ``next_thought_needed`` reads as when it is false."""

    def json(self, payload: sa.ColumnElement[str], *path: str) -> Any:
        """Return the text at ``path`` in a JSON payload stored as text."""

    def started_bound(self, moment: datetime) -> object:
        """Return ``moment`` as the sessions table keeps start times, to compare with."""

    def day(self, started_at: sa.ColumnElement[Any]) -> Any:
        """Return the UTC date (``YYYY-MM-DD``) of a session's start time."""

    def estimate(self, value: Any) -> Any:
        """Return a ``total_thoughts`` read by :meth:`json` as an integer."""

    def gap_ms(self, earlier: sa.ColumnElement[Any], later: sa.ColumnElement[Any]) -> Any:
        """Return the time between two recorded times in whole milliseconds."""


async def stats_rows(fetch: Fetch, dialect: StatsDialect, where: StatsFilter) -> StatsRows:
    """Run both statements at once and return their rows.

    Raises:
        StoreError: The backend failed (as ``fetch`` raises it).
    """
    facts = asyncio.ensure_future(_facts(fetch, dialect, where))
    gaps = asyncio.ensure_future(_gaps(fetch, dialect, where))
    try:
        await asyncio.gather(facts, gaps)
    except BaseException:
        for task in (facts, gaps):
            task.cancel()
        await asyncio.gather(facts, gaps, return_exceptions=True)
        raise
    return StatsRows(facts.result(), gaps.result())


def selected_sessions(
    dialect: StatsDialect, where: StatsFilter, session_id: sa.ColumnElement[str]
) -> list[sa.ColumnElement[bool]]:
    """The conditions on a ``session_id`` column that keep the sessions ``where`` selects."""
    conditions: list[sa.ColumnElement[bool]] = []
    bounds = [
        bound(dialect.started_bound(moment))
        for moment, bound in (
            (where.since, _S.c.started_at.__ge__),
            (where.until, _S.c.started_at.__lt__),
        )
        if moment is not None
    ]
    if bounds:
        conditions.append(session_id.in_(sa.select(_S.c.session_id).where(*bounds)))
    for path, wanted in (
        (("metadata", "agent"), where.agent),
        (("metadata", "client"), where.client),
        (("owner",), where.owner),
    ):
        if wanted is not None:
            started = sa.select(_E.c.session_id).where(
                _E.c.version == 1,
                _E.c.event_type == "session.started",
                dialect.json(_E.c.payload, *path) == wanted,
            )
            conditions.append(session_id.in_(started))
    return conditions


async def _facts(fetch: Fetch, dialect: StatsDialect, where: StatsFilter) -> list[SessionFacts]:
    thought = _E.c.event_type.in_(_THOUGHTS)
    # A thought a model wrote is classified by its payload's ``kind``; any other by its type.
    kind = sa.case(
        (_E.c.event_type == "thought.generated", dialect.json(_E.c.payload, "kind")),
        else_=_E.c.event_type,
    )
    per_session = (
        sa.select(
            _E.c.session_id,
            sa.func.count().label("events"),
            sa.func.count().filter(thought).label("thoughts"),
            sa.func.count().filter(kind == "thought.revised").label("revisions"),
            sa.func.count().filter(kind == "branch.opened").label("branches"),
            sa.func.min(_E.c.version).filter(thought).label("first_v"),
            sa.func.max(_E.c.version).filter(thought).label("last_v"),
        )
        .where(*selected_sessions(dialect, where, _E.c.session_id))
        .group_by(_E.c.session_id)
        .subquery("per_session")
    )
    start, first, last = _E.alias("start"), _E.alias("first"), _E.alias("last")
    is_done = dialect.json(last.c.payload, "next_thought_needed")

    def estimate(row: Any) -> Any:
        return dialect.estimate(dialect.json(row.c.payload, "total_thoughts"))

    def at(alias: Any, version: Any, *more: sa.ColumnElement[bool]) -> sa.ColumnElement[bool]:
        return sa.and_(
            alias.c.session_id == per_session.c.session_id, alias.c.version == version, *more
        )

    # The columns of SessionFacts, in order, so each row becomes one without any per-row code.
    query = (
        sa.select(
            per_session.c.session_id,
            dialect.day(_S.c.started_at),
            dialect.json(start.c.payload, "metadata", "agent"),
            dialect.json(start.c.payload, "metadata", "client"),
            per_session.c.events,
            per_session.c.thoughts,
            per_session.c.revisions,
            per_session.c.branches,
            estimate(first),
            estimate(last),
            sa.type_coerce(is_done == dialect.not_needed, sa.Boolean),
        )
        .join(_S, _S.c.session_id == per_session.c.session_id)
        .outerjoin(start, at(start, 1, start.c.event_type == "session.started"))
        .outerjoin(first, at(first, per_session.c.first_v))
        .outerjoin(last, at(last, per_session.c.last_v))
    )
    return list(map(SessionFacts._make, await fetch(query)))


async def _gaps(fetch: Fetch, dialect: StatsDialect, where: StatsFilter) -> dict[int, int]:
    a, b = _E.alias("a"), _E.alias("b")
    gap = dialect.gap_ms(a.c.recorded_at, b.c.recorded_at)
    query = (
        sa.select(gap.label("ms"), sa.func.count().label("n"))
        .select_from(a)
        .join(b, sa.and_(b.c.session_id == a.c.session_id, b.c.version == a.c.version + 1))
        .where(
            a.c.event_type.in_(_THOUGHTS),
            b.c.event_type.in_(_THOUGHTS),
            *selected_sessions(dialect, where, a.c.session_id),
        )
        .group_by(gap)
    )
    return {row.ms: row.n for row in await fetch(query)}


__all__ = ["Fetch", "StatsDialect", "selected_sessions", "stats_rows"]
