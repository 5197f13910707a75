"""What a store answers for the ledger's statistics: one row of facts per session, and a histogram.

:meth:`Statistics.stats_rows` (a store capability) returns these rows, never one per event;
:mod:`thoughtledger.projections.analytics` folds them into rates, percentiles and breakdowns. The
SQL backends compute them in the database (see :mod:`thoughtledger.ledger.store.sql_stats`); any
other store folds its events here, with the same definitions.

Definitions: a session's agent and client are the ``agent`` and ``client`` metadata of the
``session.started`` event at its version 1; it *completes* when its last thought needs no next
one; a thought a model wrote (``thought.generated``) counts as the kind its payload names;
*time between thoughts* is the time from a thought to the next event of its session when that
event is a thought too, in whole milliseconds (each time rounded to the millisecond, half up, as
SQLite's ``julianday`` does).
"""

import itertools
from abc import abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, Protocol, runtime_checkable

from thoughtledger.ledger.envelope import RecordedEvent, format_time
from thoughtledger.ledger.events import (
    THOUGHT_TYPES,
    SessionStarted,
    ThoughtEvent,
    ThoughtGenerated,
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)


@dataclass(frozen=True, slots=True)
class StatsFilter:
    """Which sessions to count: started in ``[since, until)``, by agent, client and owner."""

    since: datetime | None = None
    until: datetime | None = None
    agent: str | None = None
    client: str | None = None
    owner: str | None = None


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


class StatsRows(NamedTuple):
    """A store's answer: the facts of each selected session, and the time between thoughts.

    Attributes:
        facts: One row per selected session, in no particular order.
        gaps_ms: How many times each time between thoughts (in whole milliseconds) occurs.
    """

    facts: list[SessionFacts]
    gaps_ms: Mapping[int, int]


@runtime_checkable
class Statistics(Protocol):
    """The facts the ledger's statistics are folded from (a store capability)."""

    @abstractmethod
    async def stats_rows(self, where: StatsFilter | None = None) -> StatsRows:
        """Return the facts of each session ``where`` selects, and the time between thoughts.

        One row per session and a histogram, never one row per event (see the module docstring
        for the definitions).

        Args:
            where: Which sessions to count; ``None`` counts every session.

        Raises:
            EventDecodingError: (a store without SQL) a stored event cannot be decoded.
            StoreError: The backend failed.
        """


class StreamsStats(Statistics):
    """Statistics folded from sessions' events held in memory (the in-memory store's ``stats``).

    Args:
        streams: Every session's events by session id, read afresh by each call.
        check_open: Raises :class:`~thoughtledger.ledger.errors.StoreError` once the store
            holding ``streams`` is closed.
    """

    def __init__(
        self, streams: Mapping[str, Sequence[RecordedEvent]], check_open: Callable[[], None]
    ) -> None:
        self._streams = streams
        self._check_open = check_open

    async def stats_rows(self, where: StatsFilter | None = None) -> StatsRows:
        """See :meth:`Statistics.stats_rows` (a fold over every session's events)."""
        self._check_open()
        return fold_stats_rows(self._streams, where or StatsFilter())


def fold_stats_rows(
    streams: Mapping[str, Sequence[RecordedEvent]], where: StatsFilter
) -> StatsRows:
    """Fold every session's events (each in version order) into the rows ``where`` selects.

    Raises:
        EventDecodingError: A stored event cannot be decoded.
    """
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
            and (where.owner is None or _owner(records) == where.owner)
        ):
            facts.append(item)
            gaps.update(_gaps(records))
    return StatsRows(facts, gaps)


def _owner(records: Sequence[RecordedEvent]) -> str | None:
    first = records[0].event
    return first.owner if isinstance(first, SessionStarted) else None


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


__all__ = [
    "SessionFacts",
    "Statistics",
    "StatsFilter",
    "StatsRows",
    "StreamsStats",
    "fold_stats_rows",
]
