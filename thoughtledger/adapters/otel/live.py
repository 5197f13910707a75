"""``serve --otlp URL``: each thought sent as a span as it is recorded.

The ledger calls :meth:`LiveTraces.recorded` after each append (see
:meth:`thoughtledger.api.Ledger.observe`); it only queues the events, so recording never
waits for the network. A worker turns them into spans
(:class:`thoughtledger.adapters.otel.spans.SessionTrace`, one per session) and sends them in
batches, at
most a second after they were recorded. A session's root span (``invoke_agent``) is sent once the
session ends (its last thought needs no next one, or it is cleared or expires), and for the sessions
still open when the server stops. A session that was already under way when the server started has
its trace picked up from its first event.

Telemetry never stops the server: a failed send is logged on stderr and its spans dropped, and
when the endpoint cannot keep up, events beyond :data:`QUEUE_LIMIT` are dropped and counted.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from thoughtledger.adapters.otel.spans import Conventions, SessionTrace, SpanData
from thoughtledger.api import Ledger, LoopMark
from thoughtledger.ledger.envelope import EventRow, RecordedEvent
from thoughtledger.ledger.errors import LedgerError
from thoughtledger.ledger.events import THOUGHT_TYPES

QUEUE_LIMIT = 100_000
"""Events waiting to be turned into spans, at most (beyond: dropped, and counted in the log)."""
LINGER_SECONDS = 1.0
"""How long spans wait for others to share their request."""

STOP_SECONDS = 30.0
"""How long a stopping server waits for its last spans to be sent."""

_log = logging.getLogger("thoughtledger.otel")


class SpanSender(Protocol):
    """Sends spans (:class:`thoughtledger.adapters.otel.exporter.OtlpSender`)."""

    async def send(self, spans: Sequence[SpanData]) -> None:
        """Send ``spans``; raise :class:`~.LedgerError` when they are refused."""


class LiveTraces:
    """Turns appended events into spans and sends them (see the module docstring).

    Args:
        ledger: The ledger whose appends to follow (to read a session's start when needed).
        sender: Sends a batch of spans.
        conventions: What the environment asks of the spans.
    """

    def __init__(self, ledger: Ledger, sender: SpanSender, conventions: Conventions) -> None:
        self._ledger = ledger
        self._sender = sender
        self._conventions = conventions
        self._queue: asyncio.Queue[list[RecordedEvent] | None] = asyncio.Queue()
        self._queued = 0
        self._traces: dict[str, SessionTrace] = {}
        self.dropped = 0
        self.sent = 0

    def recorded(self, records: list[RecordedEvent]) -> None:
        """Queue freshly appended events (never blocks, never raises)."""
        if self._queued + len(records) > QUEUE_LIMIT:
            self.dropped += len(records)
            return
        self._queued += len(records)
        self._queue.put_nowait(records)

    def stop(self) -> None:
        """Ask :meth:`run` to send what is left, the open sessions' roots included, and return."""
        self._queue.put_nowait(None)

    async def run(self) -> None:
        """Turn queued events into spans and send them, until :meth:`stop`."""
        stopping = False
        while not stopping:
            batch: list[list[RecordedEvent]] = []
            item = await self._queue.get()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(LINGER_SECONDS):
                    while item is not None:
                        batch.append(item)
                        if sum(map(len, batch)) >= 2048:
                            break
                        item = await self._queue.get()
            stopping = item is None
            spans = await self._spans(batch)
            if stopping:
                spans += [trace.root() for trace in self._traces.values()]  # still open
                self._traces.clear()
            await self._send(spans)

    async def _spans(self, batch: list[list[RecordedEvent]]) -> list[SpanData]:
        spans: list[SpanData] = []
        records = [record for records in batch for record in records]
        self._queued -= len(records)
        marks = await self._marks(records)
        for record in records:
            trace = self._traces.get(record.session_id) or await self._trace_of(record)
            if trace is None:
                continue
            trace.learn(marks.pop(record.session_id, ()))
            spans += trace.add(EventRow.of(record))
            if trace.ended:
                spans.append(trace.root())
                del self._traces[record.session_id]
        return spans

    async def _marks(self, records: list[RecordedEvent]) -> dict[str, list[LoopMark]]:
        """The loop marks of the sessions whose thoughts ``records`` hold, up to the last one."""
        last: dict[str, int] = {}
        for record in records:
            if record.event_type in THOUGHT_TYPES:
                last[record.session_id] = record.version
        found: dict[str, list[LoopMark]] = {}
        for session_id, version in last.items():
            try:
                found[session_id] = await self._ledger.loops.marks(session_id, to_version=version)
            except LedgerError as exc:
                _log.warning("otlp: cannot read the loop marks of %s: %s", session_id, exc)
        return found

    async def _trace_of(self, record: RecordedEvent) -> SessionTrace | None:
        """Start a session's trace at ``record``, reading its earlier events if any."""
        earlier: list[RecordedEvent] = []
        if record.version > 1:
            try:
                earlier = await self._ledger.events(
                    record.session_id, as_of_version=record.version - 1
                )
            except LedgerError as exc:
                _log.warning("otlp: cannot read the start of %s: %s", record.session_id, exc)
                return None
        first = earlier[0] if earlier else record
        trace = SessionTrace(EventRow.of(first), self._conventions)
        self._traces[record.session_id] = trace
        for previous in earlier:
            # Their spans were sent before (or by an export): read for the links only.
            trace.add(EventRow.of(previous))
        return trace

    async def _send(self, spans: list[SpanData]) -> None:
        if not spans:
            return
        try:
            await self._sender.send(spans)
        except LedgerError as exc:
            _log.warning("otlp: %s spans dropped: %s", len(spans), exc)
            return
        self.sent += len(spans)


@contextlib.asynccontextmanager
async def live_traces(ledger: Ledger, url: str) -> AsyncIterator[LiveTraces]:
    """Send ``ledger``'s thoughts to ``url`` as they are recorded, while the block runs.

    Raises:
        InvalidInputError: ``url`` is not http(s).
        MissingExtraError: The ``otel`` extra is not installed.
    """
    from thoughtledger.adapters.otel.exporter import OtlpSender, traces_url

    sender = OtlpSender(traces_url(url))
    live = LiveTraces(ledger, sender, Conventions.from_env())
    ledger.observe(live.recorded)
    worker = asyncio.ensure_future(live.run())
    try:
        yield live
    finally:
        live.stop()
        try:
            # What is left goes out before the server exits, unless the endpoint hangs.
            async with asyncio.timeout(STOP_SECONDS):
                await asyncio.shield(worker)
        except TimeoutError:
            worker.cancel()
            _log.warning("otlp: the endpoint did not take the last spans in time: dropped")
        if live.dropped:
            _log.warning(
                "otlp: %s events were recorded faster than sent, and dropped", live.dropped
            )
        sender.close()


__all__ = ["QUEUE_LIMIT", "LiveTraces", "SpanSender", "live_traces"]
