"""Every session of a ledger as traces, from one read of its log in position order.

Reading the log page by page, with nothing decoded
(:meth:`~thoughtledger.ledger.store.rows.RowReads.read_all_event_rows`), is many times
faster than reading each session's stream: one indexed range per page instead of two queries a
session, and one JSON parse per event instead of a model. Sessions interleave in the log, so
:class:`LogTraces` keeps one :class:`~thoughtledger.adapters.otel.spans.SessionTrace` per session
under
way, and sends a session's root span once its last event (the head's, when the export began) has
gone
by: memory holds the sessions whose events are still to come, never the events.
"""

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Protocol

from thoughtledger.adapters.otel.exporter import BATCH
from thoughtledger.adapters.otel.spans import Conventions, SessionTrace, SpanData
from thoughtledger.api import Ledger, LoopMark, NoProgress, Progress
from thoughtledger.ledger.envelope import EventRow

FLUSH_SPANS = BATCH
"""Spans gathered before a send (one request): sessions are batched together, and memory holds
at most two batches' bytes (one being sent, one being made)."""


_CHUNK = 256
"""Events folded, then their spans encoded, at a time: spans die young, as the bytes of a batch
replace them, so the garbage collector never has to look at them again."""


class BulkSender(Protocol):
    """Encodes spans as they are made, and sends them (:class:`.OtlpSender`)."""

    def encode(self, spans: Sequence[SpanData]) -> list[Any]:
        """Return each span ready to send."""

    async def send_encoded(self, encoded: Sequence[Any]) -> None:
        """Send spans made ready by :meth:`encode`; raise a ``LedgerError`` when refused."""


class LogTraces:
    """Turns pages of the log (in position order) into the spans of its sessions, root last.

    Args:
        heads: Each session to export, with the version it is exported up to (its head's when
            the export began); events of other sessions, or beyond that version, are skipped.
        conventions: What the environment asks of the spans.
        marks: The loop marks of the sessions that have any (``ledger.loops.marks_of``).
    """

    def __init__(
        self,
        heads: Mapping[str, int],
        conventions: Conventions,
        marks: Mapping[str, Sequence[LoopMark]] | None = None,
    ) -> None:
        self._heads = dict(heads)
        self._conventions = conventions
        self._marks = marks or {}
        self._traces: dict[str, SessionTrace] = {}
        self.finished = 0
        """Sessions whose every span (root included) has been returned."""

    def fold(self, rows: Iterable[EventRow]) -> list[SpanData]:
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
                trace.learn(self._marks.get(session_id, ()))
            spans += trace.add(row)
            if row.version == last:
                spans.append(trace.root())
                del traces[session_id], heads[session_id]
                self.finished += 1
        return spans

    def unfinished(self) -> list[tuple[str, int, int]]:
        """Each session not finished yet: its id, the last version folded (0: none), its head's."""
        traces = self._traces
        return [
            (session_id, traces[session_id].version if session_id in traces else 0, last)
            for session_id, last in self._heads.items()
        ]

    def rest(self) -> list[SpanData]:
        """Return the roots of sessions begun but not finished (none once every event is read)."""
        roots = [trace.root() for trace in self._traces.values()]
        self.finished += len(roots)
        self._traces.clear()
        self._heads.clear()
        return roots


class _Batches:
    """Encoded spans waiting for a full request, and the request under way (one at a time)."""

    def __init__(self, sender: BulkSender) -> None:
        self._sender = sender
        self._pending: list[Any] = []
        self._sending: asyncio.Future[None] | None = None
        self.sent = 0

    async def add(self, encoded: list[Any]) -> None:
        self._pending += encoded
        if len(self._pending) >= FLUSH_SPANS:
            if self._sending is not None:
                await self._sending
            self._sending = asyncio.ensure_future(self._sender.send_encoded(self._pending))
            await asyncio.sleep(0)  # under way now: a store's reads may never yield
            self.sent += len(self._pending)
            self._pending = []

    async def close(self) -> int:
        """Send what is left, once the request under way is accepted; return the spans sent."""
        if self._sending is not None:
            sending, self._sending = self._sending, None
            await sending
        await self._sender.send_encoded(self._pending)
        self.sent += len(self._pending)
        self._pending = []
        return self.sent

    async def abandon(self) -> None:
        """Let go of the request under way (the export stopped on an error)."""
        if self._sending is not None:
            self._sending.cancel()
            await asyncio.gather(self._sending, return_exceptions=True)


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

    async def send(self, sender: BulkSender, step: Progress | None = None) -> int:
        """Send the sessions' spans in batches; return how many spans were sent.

        Every session is read from one pass over the whole log (:meth:`.Transfer.event_rows`)
        when all are exported, else each chosen session's stream on its own; so is any
        session whose last events the log's pages did not show yet. Spans are encoded
        as they are made (only their bytes wait for a batch to fill), and a full batch is sent
        from a worker thread while the next one is made.

        Args:
            sender: Encodes and sends the spans.
            step: Advanced by one for each session sent whole.

        Raises:
            EventDecodingError: A stored event cannot be decoded.
            LedgerError: The ledger failed, or ``sender`` refused a batch.
        """
        step = step or NoProgress()
        marks = await self._ledger.loops.marks_of(self._heads)
        fold = LogTraces(self._heads, self._conventions, marks)
        batches = _Batches(sender)
        try:
            async for page in self._pages(fold):
                before = fold.finished
                for start in range(0, len(page), _CHUNK):
                    await batches.add(sender.encode(fold.fold(page[start : start + _CHUNK])))
                step.advance(fold.finished - before)
            await batches.add(sender.encode(fold.rest()))
            return await batches.close()
        finally:
            await batches.abandon()

    async def _pages(self, fold: LogTraces) -> AsyncIterator[list[EventRow]]:
        if self._whole_log:
            async for page in self._ledger.transfer.event_rows():
                yield page
        # Read session by session: every chosen session, or what the log's pages did not show
        # (PostgreSQL shows a page reader no event that a transaction still in flight precedes).
        for session_id, seen, last in fold.unfinished():
            async for rows in self._ledger.transfer.session_rows(
                session_id, after_version=seen, to_version=last
            ):
                yield rows


__all__ = ["FLUSH_SPANS", "BulkSender", "LogTraces", "TraceExport"]
