"""Every session of a ledger as traces, from one read of its log in position order.

Reading the log page by page (:meth:`~ledger.store.stored.StoredReads.read_all_stored`), with
nothing decoded, is many times faster than reading each session's stream: one indexed range
per page instead of two queries a session, and one JSON parse per event instead of a model.
Sessions interleave in the log, so :class:`LogTraces` keeps one
:class:`~api.otel.spans.SessionTrace` per session under way, and sends a session's root span
once its last event (the head's, when the export began) has gone by: memory holds the sessions
whose events are still to come, never the events.
"""

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence

from api.otel.live import SpanSender
from api.otel.spans import Conventions, SessionTrace, SpanData
from api.service import Ledger
from api.transfer.progress import NoProgress, Progress
from ledger.chain import StoredRow

FLUSH_SPANS = 8192
"""Spans gathered before a send: sessions are batched together, memory stays bounded."""


class LogTraces:
    """Turns pages of the log (in position order) into the spans of its sessions, root last.

    Args:
        heads: Each session to export, with the version it is exported up to (its head's when
            the export began); events of other sessions, or beyond that version, are skipped.
        conventions: What the environment asks of the spans.
    """

    def __init__(self, heads: Mapping[str, int], conventions: Conventions) -> None:
        self._heads = dict(heads)
        self._conventions = conventions
        self._traces: dict[str, SessionTrace] = {}
        self.finished = 0
        """Sessions whose every span (root included) has been returned."""

    @property
    def pending(self) -> int:
        """Sessions still to be finished."""
        return len(self._heads)

    def fold(self, rows: Iterable[StoredRow]) -> list[SpanData]:
        """Return the spans of ``rows``, which continue the pages folded before.

        Raises:
            EventDecodingError: A stored event cannot be decoded.
        """
        spans: list[SpanData] = []
        heads, traces = self._heads, self._traces
        for row in rows:
            session_id = row.session_id
            last = heads.get(session_id)
            if last is None or row.version > last:
                continue
            trace = traces.get(session_id)
            if trace is None:
                trace = traces[session_id] = SessionTrace(row, self._conventions)
            spans += trace.add(row)
            if row.version == last:
                spans.append(trace.root())
                del traces[session_id], heads[session_id]
                self.finished += 1
        return spans

    def rest(self) -> list[SpanData]:
        """Return the roots of sessions begun but not finished when the log ran out.

        None in a ledger nobody writes to; a session appended to after its head was read ends
        at its head, and one whose last events were not yet visible ends at what was read.
        """
        roots = [trace.root() for trace in self._traces.values()]
        self.finished += len(roots)
        self._traces.clear()
        self._heads.clear()
        return roots


class TraceExport:
    """One export of sessions as traces: which sessions, each up to which version, and how read.

    Make one with :meth:`of`, then :meth:`send` it.
    """

    def __init__(
        self, ledger: Ledger, conventions: Conventions, heads: dict[str, int], *, whole_log: bool
    ) -> None:
        self._ledger = ledger
        self._conventions = conventions
        self._heads = heads
        self._whole_log = whole_log

    @classmethod
    async def of(
        cls, ledger: Ledger, conventions: Conventions, session_ids: Sequence[str] | None = None
    ) -> "TraceExport":
        """Fix what to export: each chosen session (``None``: every one) up to its head now.

        Raises:
            InvalidInputError: A malformed session id.
            StoreError: The store failed.
        """
        if session_ids is None:
            heads = await ledger.all_heads()
        else:
            chosen = [await ledger.head(session_id) for session_id in dict.fromkeys(session_ids)]
            heads = [head for head in chosen if head is not None]
        versions = {head.session_id: head.version for head in heads}
        return cls(ledger, conventions, versions, whole_log=session_ids is None)

    @property
    def sessions(self) -> int:
        """How many sessions the export sends."""
        return len(self._heads)

    async def send(self, sender: SpanSender, step: Progress | None = None) -> int:
        """Send the sessions' spans in batches; return how many spans were sent.

        Every session is read from one pass over the whole log (:meth:`Ledger.stored_rows`)
        when all are exported, else each chosen session's stream on its own.

        Args:
            sender: Sends each batch of spans.
            step: Advanced by one for each session sent whole.

        Raises:
            EventDecodingError: A stored event cannot be decoded.
            LedgerError: The ledger failed, or ``sender`` refused a batch.
        """
        step = step or NoProgress()
        rows = (
            self._ledger.stored_rows()
            if self._whole_log
            else _rows_of(self._ledger, list(self._heads))
        )
        fold = LogTraces(self._heads, self._conventions)
        sent = 0
        pending: list[SpanData] = []
        async for page in rows:
            before = fold.finished
            pending += fold.fold(page)
            if len(pending) >= FLUSH_SPANS:
                await sender.send(pending)
                sent, pending = sent + len(pending), []
            step.advance(fold.finished - before)
        pending += fold.rest()
        await sender.send(pending)
        return sent + len(pending)


async def _rows_of(ledger: Ledger, session_ids: list[str]) -> AsyncIterator[list[StoredRow]]:
    """The chosen sessions' events, each session read on its own (a few, not the whole log)."""
    async for records in ledger.export(session_ids):
        yield [StoredRow.of(record) for record in records]


__all__ = ["FLUSH_SPANS", "LogTraces", "TraceExport"]
