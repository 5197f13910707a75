"""Analytics over every session of a store: the figures behind ``thoughtledger stats``.

On the SQL backends the database does the per-event work in two statements, and Python never sees
an event. The first walks ``tl_events`` in (session, version) index order and reduces it to one
row of facts per session: counts by event type, plus three keyed lookups per session (its start
event's metadata, its first and last thought's estimate). JSON is read in SQL: ``json_extract``
on SQLite, ``payload::json ->>`` on PostgreSQL (payloads are stored as text; ``json`` is parsed
without ``jsonb``'s re-encoding). The second pairs each thought with the next event of its
session through the (session, version) key and returns a histogram of the time between them in
whole milliseconds, from which the percentiles are read exactly. Python then folds the
per-session rows, an order of magnitude fewer than events, into rates, percentiles and breakdowns.

The in-memory backend has no SQL: it folds its events in Python into the same per-session facts
and histogram, so every backend answers through one summary with the same definitions.

Definitions: a session's agent and client are the ``agent`` and ``client`` metadata of the
``session.started`` event at its version 1; it *completes* when its last thought needs no next
one; a thought a model wrote (``thought.generated``) counts as the kind its payload names;
*time between thoughts* is the time from a thought to the next event of its session when that
event is a thought too, in whole milliseconds (each time rounded to the millisecond, as SQLite's
``julianday`` does); percentiles are nearest-rank (the p-th of n sorted values is the
ceil(p * n / 100)-th).
"""

import asyncio
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from ledger.envelope import RecordedEvent, format_time
from ledger.events import THOUGHT_TYPES, SessionStarted, ThoughtEvent, ThoughtGenerated
from ledger.percentile import nearest_rank
from ledger.store import schema
from ledger.store.base import EventStore
from ledger.store.sql import SqlEventStore

_E = schema.events
_S = schema.sessions
_THOUGHTS = sorted(THOUGHT_TYPES)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)


@dataclass(frozen=True, slots=True)
class StatsFilter:
    """Which sessions to count: started within ``[since, until)``, by ``agent`` and ``client``."""

    since: datetime | None = None
    until: datetime | None = None
    agent: str | None = None
    client: str | None = None


class SessionFacts(NamedTuple):
    """What the analytics need of one session: one row per session, never one per event.

    A named tuple, built straight from a result row: there can be a hundred thousand of them.
    """

    session_id: str
    day: str
    agent: str | None
    client: str | None
    events: int
    thoughts: int
    revisions: int
    branches: int
    first_total: int | None
    last_total: int | None
    completed: bool


@dataclass(frozen=True, slots=True)
class GroupStats:
    """Figures over a group of sessions; rates are fractions in [0, 1].

    ``completion_rate``: share of sessions whose last thought needs no next one;
    ``revision_rate``: share of thoughts that are revisions; ``branch_rate``: share of sessions
    that open a branch; ``fan_out``: branches per session that branches; ``drift``: the last
    estimate of ``totalThoughts`` minus the first, per session with thoughts.
    """

    sessions: int
    events: int
    thoughts: int
    completion_rate: float
    revision_rate: float
    branch_rate: float
    branches: int
    fan_out: float
    thoughts_p50: int
    thoughts_p95: int
    drift_mean: float | None
    drift_p50: int | None
    drift_p95: int | None


@dataclass(frozen=True, slots=True)
class LedgerStats:
    """The whole answer: overall figures, time between thoughts, and two breakdowns."""

    overall: GroupStats
    gap_p50_seconds: float | None
    gap_p95_seconds: float | None
    by_agent: list[tuple[str | None, str | None, GroupStats]] = field(default_factory=list)
    by_day: list[tuple[str, GroupStats]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Return the figures as plain JSON-ready data."""
        return {
            "overall": {
                **asdict(self.overall),
                "gap_p50_seconds": self.gap_p50_seconds,
                "gap_p95_seconds": self.gap_p95_seconds,
            },
            "by_agent": [
                {"agent": agent, "client": client, **asdict(group)}
                for agent, client, group in self.by_agent
            ],
            "by_day": [{"day": day, **asdict(group)} for day, group in self.by_day],
        }


def summarize_group(facts: Sequence[SessionFacts]) -> GroupStats:
    """Fold per-session facts into the figures of one group."""
    thoughts = sum(f.thoughts for f in facts)
    branches = sum(f.branches for f in facts)
    branching = sum(1 for f in facts if f.branches)
    counts = Counter(f.thoughts for f in facts)
    drifts = Counter(
        f.last_total - f.first_total
        for f in facts
        if f.last_total is not None and f.first_total is not None
    )
    drifted = sum(drifts.values())
    return GroupStats(
        sessions=len(facts),
        events=sum(f.events for f in facts),
        thoughts=thoughts,
        completion_rate=_share(sum(1 for f in facts if f.completed), len(facts)),
        revision_rate=_share(sum(f.revisions for f in facts), thoughts),
        branch_rate=_share(branching, len(facts)),
        branches=branches,
        fan_out=_share(branches, branching),
        thoughts_p50=nearest_rank(counts, 50) or 0,
        thoughts_p95=nearest_rank(counts, 95) or 0,
        drift_mean=round(sum(k * n for k, n in drifts.items()) / drifted, 4) if drifted else None,
        drift_p50=nearest_rank(drifts, 50),
        drift_p95=nearest_rank(drifts, 95),
    )


def summarize(facts: Sequence[SessionFacts], gaps_ms: Mapping[int, int]) -> LedgerStats:
    """Fold per-session facts and the time-between-thoughts histogram into the answer."""
    by_agent: defaultdict[tuple[str | None, str | None], list[SessionFacts]] = defaultdict(list)
    by_day: defaultdict[str, list[SessionFacts]] = defaultdict(list)
    for item in facts:
        by_agent[item.agent, item.client].append(item)
        by_day[item.day].append(item)
    p50, p95 = nearest_rank(gaps_ms, 50), nearest_rank(gaps_ms, 95)
    return LedgerStats(
        overall=summarize_group(facts),
        gap_p50_seconds=None if p50 is None else p50 / 1000,
        gap_p95_seconds=None if p95 is None else p95 / 1000,
        by_agent=[
            (agent, client, summarize_group(group))
            for (agent, client), group in sorted(
                by_agent.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or "")
            )
        ],
        by_day=[(day, summarize_group(group)) for day, group in sorted(by_day.items())],
    )


async def ledger_stats(store: EventStore, where: StatsFilter | None = None) -> LedgerStats:
    """Compute the analytics of ``store`` over the sessions ``where`` selects.

    Raises:
        EventDecodingError: (in-memory backend) a stored event cannot be decoded.
        StoreError: The backend failed.
    """
    where = where or StatsFilter()
    if not isinstance(store, SqlEventStore):
        return await _scan(store, where)
    # Two statements on two connections: each database scan runs while the other does.
    facts = asyncio.ensure_future(_sql_facts(store, where))
    gaps = asyncio.ensure_future(_sql_gaps(store, where))
    try:
        await asyncio.gather(facts, gaps)
    except BaseException:
        for task in (facts, gaps):
            task.cancel()
        await asyncio.gather(facts, gaps, return_exceptions=True)
        raise
    return summarize(facts.result(), gaps.result())


# -- SQL ------------------------------------------------------------------------------------------


def _postgres(store: SqlEventStore) -> bool:
    return store._engine.dialect.name == "postgresql"  # analytics is part of the store package


def _json(store: SqlEventStore, payload: sa.ColumnElement[str], *path: str) -> Any:
    if _postgres(store):
        document = sa.cast(payload, postgresql.JSON)
        return document[path[0]].astext if len(path) == 1 else document[path].astext
    return sa.func.json_extract(payload, "$." + ".".join(path))


def _selected(
    store: SqlEventStore, where: StatsFilter, session_id: sa.ColumnElement[str]
) -> list[sa.ColumnElement[bool]]:
    conditions: list[sa.ColumnElement[bool]] = []
    # SQLite keeps times as canonical text (see ledger.envelope), PostgreSQL as timestamptz.
    bounds = [
        bound(moment if _postgres(store) else format_time(moment))
        for moment, bound in (
            (where.since, _S.c.started_at.__ge__),
            (where.until, _S.c.started_at.__lt__),
        )
        if moment is not None
    ]
    if bounds:
        conditions.append(session_id.in_(sa.select(_S.c.session_id).where(*bounds)))
    for key, wanted in (("agent", where.agent), ("client", where.client)):
        if wanted is not None:
            started = sa.select(_E.c.session_id).where(
                _E.c.version == 1,
                _E.c.event_type == "session.started",
                _json(store, _E.c.payload, "metadata", key) == wanted,
            )
            conditions.append(session_id.in_(started))
    return conditions


async def _sql_facts(store: SqlEventStore, where: StatsFilter) -> list[SessionFacts]:
    thought = _E.c.event_type.in_(_THOUGHTS)
    # A thought a model wrote is classified by its payload's ``kind``; any other by its type.
    kind = sa.case(
        (_E.c.event_type == "thought.generated", _json(store, _E.c.payload, "kind")),
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
        .where(*_selected(store, where, _E.c.session_id))
        .group_by(_E.c.session_id)
        .subquery("per_session")
    )
    start, first, last = _E.alias("start"), _E.alias("first"), _E.alias("last")
    is_done = _json(store, last.c.payload, "next_thought_needed")
    total = sa.Integer() if _postgres(store) else None

    def estimate(row: Any) -> Any:
        value = _json(store, row.c.payload, "total_thoughts")
        return sa.cast(value, total) if total is not None else value

    def at(alias: Any, version: Any, *more: sa.ColumnElement[bool]) -> sa.ColumnElement[bool]:
        return sa.and_(
            alias.c.session_id == per_session.c.session_id, alias.c.version == version, *more
        )

    if _postgres(store):
        day: Any = sa.func.to_char(sa.func.timezone("UTC", _S.c.started_at), "YYYY-MM-DD")
    else:
        day = sa.func.substr(_S.c.started_at, 1, 10)  # canonical UTC text: its date comes first
    # The columns of SessionFacts, in order, so each row becomes one without any per-row code.
    query = (
        sa.select(
            per_session.c.session_id,
            day,
            _json(store, start.c.payload, "metadata", "agent"),
            _json(store, start.c.payload, "metadata", "client"),
            per_session.c.events,
            per_session.c.thoughts,
            per_session.c.revisions,
            per_session.c.branches,
            estimate(first),
            estimate(last),
            # json_extract gives SQLite's 0 for false; ->> gives PostgreSQL the text 'false'.
            sa.type_coerce(is_done == ("false" if _postgres(store) else 0), sa.Boolean),
        )
        .join(_S, _S.c.session_id == per_session.c.session_id)
        .outerjoin(start, at(start, 1, start.c.event_type == "session.started"))
        .outerjoin(first, at(first, per_session.c.first_v))
        .outerjoin(last, at(last, per_session.c.last_v))
    )
    return list(map(SessionFacts._make, await store._fetch(query)))


async def _sql_gaps(store: SqlEventStore, where: StatsFilter) -> dict[int, int]:
    a, b = _E.alias("a"), _E.alias("b")
    if _postgres(store):

        def millis(column: Any) -> Any:
            return sa.func.floor(sa.extract("epoch", column) * 1000 + 0.5)

        gap: Any = sa.cast(millis(b.c.recorded_at) - millis(a.c.recorded_at), sa.BigInteger)
    else:
        # julianday rounds each time to the millisecond; round() only removes float noise.
        days = sa.func.julianday(b.c.recorded_at) - sa.func.julianday(a.c.recorded_at)
        gap = sa.cast(sa.func.round(days * 86_400_000), sa.Integer)
    query = (
        sa.select(gap.label("ms"), sa.func.count().label("n"))
        .select_from(a)
        .join(b, sa.and_(b.c.session_id == a.c.session_id, b.c.version == a.c.version + 1))
        .where(
            a.c.event_type.in_(_THOUGHTS),
            b.c.event_type.in_(_THOUGHTS),
            *_selected(store, where, a.c.session_id),
        )
        .group_by(gap)
    )
    return {row.ms: row.n for row in await store._fetch(query)}


# -- in memory ------------------------------------------------------------------------------------


async def _scan(store: EventStore, where: StatsFilter) -> LedgerStats:
    streams: dict[str, list[RecordedEvent]] = defaultdict(list)
    after = 0
    while page := await store.read_all(after_position=after, limit=5000):
        after = page[-1].position
        for record in page:
            streams[record.session_id].append(record)
    facts: list[SessionFacts] = []
    gaps: Counter[int] = Counter()
    for session_id, records in streams.items():
        item = _facts(session_id, records)
        started = records[0].recorded_at
        if (
            (where.since is None or started >= where.since)
            and (where.until is None or started < where.until)
            and (where.agent is None or item.agent == where.agent)
            and (where.client is None or item.client == where.client)
        ):
            facts.append(item)
            gaps.update(_gaps(records))
    return summarize(facts, gaps)


def _facts(session_id: str, records: Sequence[RecordedEvent]) -> SessionFacts:
    first = records[0].event
    metadata = first.metadata if isinstance(first, SessionStarted) else {}
    thoughts = [r.event for r in records if isinstance(r.event, ThoughtEvent)]
    return SessionFacts(
        session_id=session_id,
        day=format_time(records[0].recorded_at)[:10],
        agent=metadata.get("agent"),
        client=metadata.get("client"),
        events=len(records),
        thoughts=len(thoughts),
        revisions=sum(1 for e in thoughts if _kind(e) == "thought.revised"),
        branches=sum(1 for e in thoughts if _kind(e) == "branch.opened"),
        first_total=thoughts[0].total_thoughts if thoughts else None,
        last_total=thoughts[-1].total_thoughts if thoughts else None,
        completed=bool(thoughts) and not thoughts[-1].next_thought_needed,
    )


def _kind(event: ThoughtEvent) -> str:
    return event.kind if isinstance(event, ThoughtGenerated) else event.type


def _gaps(records: Sequence[RecordedEvent]) -> Iterable[int]:
    def millis(moment: datetime) -> int:
        return (moment - _EPOCH + _MILLISECOND / 2) // _MILLISECOND  # rounded, half up

    for earlier, later in itertools.pairwise(records):
        if earlier.event_type in THOUGHT_TYPES and later.event_type in THOUGHT_TYPES:
            yield millis(later.recorded_at) - millis(earlier.recorded_at)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


__all__ = [
    "GroupStats",
    "LedgerStats",
    "SessionFacts",
    "StatsFilter",
    "ledger_stats",
    "summarize",
    "summarize_group",
]
