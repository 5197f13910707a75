"""Figures over a whole ledger: how its sessions went, and what the models that wrote cost.

A component of :class:`thoughtledger.api.Ledger`, reached as ``ledger.stats``. The statistics are
a fold (:mod:`thoughtledger.projections.analytics`) over the rows the store answers, in SQL where
the store speaks it (which imports SQLAlchemy on the first figures asked for, not whenever a ledger
is made).
"""

from datetime import datetime

from thoughtledger.api.lookup import all_heads
from thoughtledger.api.loop_follow import Loops
from thoughtledger.api.session_figures import FIGURES_WINDOW, SessionFigures, session_figures
from thoughtledger.ledger.envelope import EventRow, RecordedEvent, format_time, parse_time
from thoughtledger.ledger.events import THOUGHT_TYPES, ThoughtGenerated
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.ledger.store.loop_marks import LoopMarking
from thoughtledger.ledger.store.rows import COUNTED_TYPES, RowReads, decode_rows, event_rows_of
from thoughtledger.ledger.store.stats_rows import Statistics as StatsSource
from thoughtledger.ledger.store.stats_rows import StatsFilter
from thoughtledger.projections.analytics import GroupStats, LedgerStats, summarize
from thoughtledger.projections.annotations import LabelStats, label_stats
from thoughtledger.projections.event_fields import event_fields
from thoughtledger.projections.loop_counts import LoopCounter, LoopStats
from thoughtledger.projections.usage import ModelUsage, UsageTally


async def ledger_stats(source: StatsSource, where: StatsFilter | None = None) -> LedgerStats:
    """Compute the figures of ``source``'s rows over the sessions ``where`` selects.

    Raises:
        EventDecodingError: (in-memory store) a stored event cannot be decoded.
        StoreError: The store failed.
    """
    rows = await source.stats_rows(where or StatsFilter())
    return summarize(rows.facts, rows.gaps_ms)


class Statistics:
    """A ledger's figures: ``ledger.stats.summarize()``, ``ledger.stats.model_usage()``.

    Args:
        store: The log the figures are worked out over.
        source: The rows the sessions' figures are folded from.
        rows: The log's rows, undecoded (folded whole where the marks are not kept).
        marks: The stored loop marks, counted.
        loops: The ledger's loop marks (a session they have not taken in yet is folded there);
            ``None``: read from the store, never written.
    """

    def __init__(
        self,
        store: EventStore,
        source: StatsSource,
        rows: RowReads,
        marks: LoopMarking,
        loops: Loops | None = None,
    ) -> None:
        self._store = store
        self._source = source
        self._rows = rows
        self._marks = marks
        self._loops = loops if loops is not None else Loops(store, marks, rows, follow=False)

    async def summarize(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
        client: str | None = None,
        owner: str | None = None,
    ) -> LedgerStats:
        """Rates and percentiles over the sessions started in ``[since, until)``.

        Args:
            since: Count sessions started at or after this (aware) time.
            until: Count sessions started before this (aware) time.
            agent: Count only sessions of this agent.
            client: Count only sessions from this client.
            owner: Count only sessions this principal started.

        Raises:
            EventDecodingError: (in-memory store) a stored event cannot be decoded.
            StoreError: The store failed.
        """
        where = StatsFilter(since=since, until=until, agent=agent, client=client, owner=owner)
        return await ledger_stats(self._source, where)

    async def model_usage(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        page: int = 1000,
    ) -> list[ModelUsage]:
        """Per model: the thoughts it wrote (tokens, latency, cost) or thought (captured).

        Reads the whole log in pages (the store's statistics are worked out in SQL; this is the
        plain definition, for ``thoughtledger stats`` and for checking faster versions against).

        Args:
            since: Count thoughts recorded at or after this (aware) time.
            until: Count thoughts recorded before this (aware) time.
            page: Events read per query.

        Raises:
            StoreError: The store failed.
        """
        return (await self.log_figures(since=since, until=until, page=page))[0]

    async def by_label(
        self, *, since: datetime | None = None, until: datetime | None = None, page: int = 1000
    ) -> list[LabelStats]:
        """Figures per annotation label (see :class:`LabelStats`), the most used first.

        Args:
            since: Count annotations recorded at or after this (aware) time.
            until: Count annotations recorded before this (aware) time.
            page: Events read per query.

        Raises:
            StoreError: The store failed.
        """
        return (await self.log_figures(since=since, until=until, page=page))[1]

    async def log_figures(
        self, *, since: datetime | None = None, until: datetime | None = None, page: int = 20_000
    ) -> tuple[list[ModelUsage], list[LabelStats]]:
        """:meth:`model_usage` and :meth:`by_label` from one read of the log (what ``stats`` shows).

        Raises:
            StoreError: The store failed.
        """
        tally = UsageTally()
        marked: list[RecordedEvent] = []
        after = 0
        # Times are canonical text, which sorts as the times do: rows are chosen before any is
        # parsed.
        low = format_time(since) if since is not None else None
        high = format_time(until) if until is not None else None
        # Only model-written and captured thoughts and annotations count here: just their rows
        # are read (through an index that holds only those). Captured thoughts, as many as
        # a receiver takes in, are parsed without their models; the rare others decoded.
        while rows := await self._rows.read_event_rows_of_types(
            COUNTED_TYPES, after_position=after, limit=page
        ):
            after = rows[-1].position
            chosen = [
                row
                for row in rows
                if (low is None or row.recorded_at >= low)
                and (high is None or row.recorded_at < high)
            ]
            for row in chosen:
                if row.event_type == "thought.captured":
                    tally.captured_fields(row.session_id, event_fields(row)["capture"])
            for record in decode_rows(r for r in chosen if r.event_type != "thought.captured"):
                if isinstance(record.event, ThoughtGenerated):
                    tally.generated(record.event.generation)
                elif record.event_type == "thought.annotated":
                    marked.append(record)
        return tally.result(), label_stats(marked)

    async def session_figures(
        self, session_id: str, *, to_version: int, window: int = FIGURES_WINDOW
    ) -> SessionFigures:
        """A session's revisions, model-written thoughts and their cost, up to ``to_version``.

        Read ``window`` events at a time, each window folded in a worker thread (see
        :mod:`thoughtledger.api.session_figures`).

        Raises:
            InvalidInputError: A malformed session id.
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed.
        """
        from thoughtledger.ledger.ids import check_id

        return await session_figures(
            self._store, check_id(session_id), to_version=to_version, window=window
        )

    async def loops(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
        client: str | None = None,
        owner: str | None = None,
        page: int = 1000,
    ) -> LoopStats:
        """Sessions with loops and repeats per session, over the sessions ``summarize`` counts.

        Counted from the loop marks the store keeps beside the log (a few SQL statements, see
        :mod:`thoughtledger.ledger.store.loop_marks`); a session with events the marks have not
        taken in yet is counted from :meth:`Loops.marks`, which folds what they lack, and a
        ledger that keeps no marks (an older one opened read-only) is folded whole
        (:meth:`loops_folded`). The figures are the caught-up ledger's either way.

        Args:
            since: Count sessions started at or after this (aware) time.
            until: Count sessions started before this (aware) time.
            agent: Count only sessions of this agent.
            client: Count only sessions from this client.
            owner: Count only sessions this principal started.
            page: Events read per query where sessions are folded.

        Raises:
            EventDecodingError: A stored event cannot be decoded.
            StoreError: The store failed.
        """
        where = StatsFilter(since=since, until=until, agent=agent, client=client, owner=owner)
        counts = await self._marks.loop_counts(where)
        if counts is None:
            return await self.loops_folded(
                since=since, until=until, agent=agent, client=client, owner=owner, page=page
            )
        repeats = dict(counts.repeats)
        for session_id in counts.behind:
            repeats[session_id] = len(await self._loops.marks(session_id))
        return LoopStats.of(counts.sessions, repeats)

    async def loops_folded(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
        client: str | None = None,
        owner: str | None = None,
        page: int = 1000,
    ) -> LoopStats:
        """:meth:`loops` by folding every thought of the log, without the stored marks.

        Reads the whole log in pages and folds each session's thoughts through
        :mod:`thoughtledger.projections.loops` (a text comparison SQL cannot make): it holds each
        counted session's window of recent thoughts, and costs a read of every thought (the
        definition the stored marks are checked against, and what an older ledger opened
        read-only is counted by).

        Args:
            since: Count sessions started at or after this (aware) time.
            until: Count sessions started before this (aware) time.
            agent: Count only sessions of this agent.
            client: Count only sessions from this client.
            owner: Count only sessions this principal started.
            page: Events read per query.

        Raises:
            EventDecodingError: A stored event cannot be decoded.
            StoreError: The store failed.
        """

        def counted(first: EventRow) -> bool:
            fields = event_fields(first) if first.event_type == "session.started" else {}
            metadata = fields.get("metadata") or {}
            started = parse_time(first.recorded_at)
            return (
                (since is None or started >= since)
                and (until is None or started < until)
                and (agent is None or metadata.get("agent") == agent)
                and (client is None or metadata.get("client") == client)
                and (owner is None or fields.get("owner") == owner)
            )

        counter = LoopCounter()
        folded: dict[str, int] = {}  # the last version folded of each session

        def fold(row: EventRow) -> None:
            session_id = row.session_id
            folded[session_id] = row.version
            if not counter.knows(session_id):
                counter.start(session_id, counted=counted(row))
            if row.event_type in THOUGHT_TYPES and counter.counts(session_id):
                fields = event_fields(row)
                counter.thought(
                    session_id,
                    row.version,
                    fields["thought_number"],
                    fields["thought"],
                    redacted=bool(fields.get("redacted")),
                )

        # Each session up to its head now. A page of the log stops before a transaction still
        # in flight anywhere (PostgreSQL), and a session's visible events are a prefix of its
        # versions: what the pages did not show is read from the session's stream after them.
        heads = await all_heads(self._store)
        after = 0
        # Undecoded rows, each thought's few fields parsed without its model.
        while rows := await self._rows.read_all_event_rows(after_position=after, limit=page):
            after = rows[-1].position
            for row in rows:
                fold(row)
        for head in heads:
            seen = folded.get(head.session_id, 0)
            if seen < head.version:
                rest = await self._store.read_stream(
                    head.session_id, after_version=seen, to_version=head.version
                )
                for row in event_rows_of(rest):
                    fold(row)
        return counter.result()


__all__ = ["GroupStats", "LabelStats", "LedgerStats", "LoopStats", "Statistics", "ledger_stats"]
