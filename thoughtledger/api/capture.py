"""Captured reasoning: an agent's own thinking, read from its telemetry, recorded as thoughts.

``ledger.capture`` (a part of :class:`thoughtledger.api.Ledger`), reached by adapters through
:meth:`thoughtledger.api.Scope.capture`. A way in (the OTLP receiver) reads spans in whatever
dialect their sender writes and hands over :class:`CapturedSpan` values; this module decides the
events. Each reasoning part becomes a ``thought.captured`` event on the session's main line, each
tool call an ``action.taken`` event naming the thought before it.

A span sent twice appends nothing the second time: every event's id is derived from the
session, the trace, the span and the part's index, so the store's own rule (an event id is
recorded once) finds the ones already there, and only the others are decided and appended.
Signatures and encrypted reasoning are kept as SHA-256 digests, never as they were sent.
"""

import asyncio
import contextlib
import hashlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from uuid import UUID

from pydantic import ValidationError

from thoughtledger.api.access import Guard, check_agent, owner_guard
from thoughtledger.api.caches import Held
from thoughtledger.api.errors import not_found
from thoughtledger.api.recording import Recorder
from thoughtledger.ledger.errors import ConcurrencyError, InvalidInputError
from thoughtledger.ledger.events import (
    MAX_ACTION_ARGUMENTS_CHARS,
    ActionTaken,
    Capture,
    CaptureForm,
    LedgerEvent,
    SessionStarted,
    ThoughtCaptured,
)
from thoughtledger.ledger.ids import check_id
from thoughtledger.projections.state import SessionState

OPAQUE_TEXT = "[opaque reasoning]"
"""The text of a captured thought whose reasoning the provider sent encrypted or redacted."""

_ATTEMPTS = 8
_CHUNK = 4096  # events per append (and ids per look-up), well under the store's bounds
_CONCURRENT = 64  # sessions appended to at once by one capture


@dataclass(frozen=True, slots=True)
class CapturedReasoning:
    """One reasoning part of a span.

    Attributes:
        text: The reasoning as sent (empty for an opaque part).
        form: ``full``, ``summary`` or ``opaque``.
        signature: The provider's signature of it, if sent (only its digest is kept).
        opaque: The encrypted or redacted content, if sent (only its digest is kept).
    """

    text: str
    form: CaptureForm = "full"
    signature: str | None = None
    opaque: str | None = None


@dataclass(frozen=True, slots=True)
class CapturedAction:
    """One tool call of a span: its name, the provider's call id and its arguments (JSON)."""

    name: str
    call_id: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class CapturedSpan:
    """What one span says of an agent's reasoning, in no dialect in particular.

    Attributes:
        trace_id: The trace, 32 lowercase hex digits.
        span_id: The span, 16 lowercase hex digits.
        dialect: How the sender wrote its reasoning (kept on each thought).
        parts: Its reasoning parts and tool calls, in the order sent.
        conversation: The sender's conversation key, if it has one (else the trace is).
        started_ns: When the span started (orders the spans of one request).
        agent: Who did the thinking (``gen_ai.agent.name``), if named.
        client: The software that sent it (the resource's ``service.name``), if named.
        provider: The model's provider, if named.
        model: The model that answered (else the one asked for), if named.
        response_id: The provider's id of the response, if sent.
        reasoning_tokens: The call's reasoning tokens, if counted.
    """

    trace_id: str
    span_id: str
    dialect: str
    parts: tuple[CapturedReasoning | CapturedAction, ...]
    conversation: str | None = None
    started_ns: int = 0
    agent: str | None = None
    client: str | None = None
    provider: str | None = None
    model: str | None = None
    response_id: str | None = None
    reasoning_tokens: int | None = None

    @property
    def session_key(self) -> str:
        """The name of the session this span's reasoning goes to, before a principal's scope.

        The conversation key when it can be a session id, a digest of it otherwise, and the
        trace when the sender has none (one session per trace).
        """
        if self.conversation is None:
            return f"trace-{self.trace_id}"
        try:
            return check_id(self.conversation)
        except InvalidInputError:
            digest = hashlib.sha256(self.conversation.encode("utf-8", "replace")).hexdigest()
            return f"conversation-{digest[:32]}"


@dataclass(slots=True)
class CaptureReport:
    """What one capture appended, and what it left.

    Attributes:
        thoughts: Reasoning parts appended as thoughts.
        actions: Tool calls appended as actions.
        duplicates: Parts already recorded (a span sent again), appended nothing.
        rejected: Parts refused (too long, not text), with ``errors`` saying why.
        sessions: The sessions written to.
        errors: One line per refused part (a few, for the sender's response).
    """

    thoughts: int = 0
    actions: int = 0
    duplicates: int = 0
    rejected: int = 0
    sessions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, other: "CaptureReport") -> None:
        """Count ``other``'s figures in this report."""
        self.thoughts += other.thoughts
        self.actions += other.actions
        self.duplicates += other.duplicates
        self.rejected += other.rejected
        self.sessions += other.sessions
        self.errors += other.errors[: max(0, 10 - len(self.errors))]


def _event_id(session_id: str, *parts: object) -> UUID:
    # A version 8 UUID (RFC 9562: custom) from a digest: the same part of the same span in the
    # same session always has the same id, and the store records an id once.
    digest = bytearray(
        hashlib.sha256("\x00".join(map(str, (session_id, *parts))).encode()).digest()
    )
    digest[6] = (digest[6] & 0x0F) | 0x80
    digest[8] = (digest[8] & 0x3F) | 0x80
    return UUID(bytes=bytes(digest[:16]))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _named(value: str | None) -> str | None:
    try:
        return check_agent(value) if value is not None else None
    except InvalidInputError:
        return None


def _metadata(span: CapturedSpan) -> dict[str, str]:
    facts = {"transport": "otlp", "source": span.dialect}
    for key, value in (("agent", _named(span.agent)), ("client", _named(span.client))):
        if value is not None:
            facts[key] = value
    if span.conversation is not None:
        facts["conversation"] = span.conversation[:256]
    return {key: value for key, value in facts.items() if _is_text(value)}


def _is_text(value: str) -> bool:
    try:
        value.encode()
    except UnicodeEncodeError:  # a lone surrogate from JSON: no event may hold it
        return False
    return True


def _clip(value: str | None) -> str | None:
    return value[:256] if value is not None else None


@dataclass(frozen=True, slots=True)
class _Part:
    span: CapturedSpan
    index: int
    item: CapturedReasoning | CapturedAction
    event_id: UUID
    last_reasoning: bool


class _RefusedPart(ValueError):
    """A part that cannot be a thought: empty, or over the ledger's thought size."""


def _action(part: _Part, item: CapturedAction, after: int | None) -> ActionTaken:
    span, arguments = part.span, item.arguments
    return ActionTaken(
        name=item.name[:256] or "-",
        call_id=_clip(item.call_id),
        arguments=arguments[:MAX_ACTION_ARGUMENTS_CHARS],
        arguments_cut=len(arguments) > MAX_ACTION_ARGUMENTS_CHARS,
        after_thought=after,
        trace_id=span.trace_id,
        span_id=span.span_id,
        part=part.index,
    )


def _thought(
    part: _Part, item: CapturedReasoning, number: int, max_thought_bytes: int
) -> ThoughtCaptured:
    span = part.span
    text = item.text if item.form != "opaque" else OPAQUE_TEXT
    size = len(text.encode("utf-8", "surrogatepass"))
    if not text.strip():
        raise _RefusedPart("reasoning is empty")
    if size > max_thought_bytes:
        raise _RefusedPart(f"reasoning has {size} bytes, over {max_thought_bytes}")
    capture = Capture(
        form=item.form,
        dialect=span.dialect[:64],
        trace_id=span.trace_id,
        span_id=span.span_id,
        part=part.index,
        provider=_clip(span.provider),
        model=_clip(span.model),
        response_id=_clip(span.response_id),
        reasoning_tokens=span.reasoning_tokens,
        signature_sha256=_sha256(item.signature) if item.signature else None,
        opaque_sha256=_sha256(item.opaque) if item.opaque else None,
        opaque_bytes=len(item.opaque) if item.opaque else None,
    )
    return ThoughtCaptured(
        thought=text,
        thought_number=number,
        total_thoughts=number,
        next_thought_needed=not part.last_reasoning,
        capture=capture,
    )


def _decide(
    state: SessionState,
    parts: Sequence[_Part],
    *,
    owner: str | None,
    started_id: UUID,
    max_thought_bytes: int,
    report: CaptureReport,
) -> tuple[list[LedgerEvent], list[UUID]]:
    """The events recording ``parts`` after ``state`` (pure), and their ids."""
    events: list[LedgerEvent] = []
    ids: list[UUID] = []
    if state.version == 0:
        events.append(SessionStarted(metadata=_metadata(parts[0].span), owner=owner))
        ids.append(started_id)
    number = state.last.thought_number if state.last is not None else 0
    last_in_span: dict[str, int] = {}
    for part in parts:
        span, item = part.span, part.item
        try:
            if isinstance(item, CapturedAction):
                after = last_in_span.get(span.span_id) or (number or None)
                events.append(_action(part, item, after))
                report.actions += 1
            else:
                events.append(_thought(part, item, number + 1, max_thought_bytes))
                number += 1
                last_in_span[span.span_id] = number
                report.thoughts += 1
        except (_RefusedPart, ValidationError) as exc:
            # Refused alone (counted in the answer); the request's other parts go on.
            why = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            report.rejected += 1
            report.errors.append(f"span {span.span_id} part {part.index}: {why}")
            continue
        ids.append(part.event_id)
    return events, ids


class Capturing:
    """Records captured reasoning: reached as ``ledger.capture``.

    Args:
        held: The sessions the ledger holds.
        recorder: The ledger's recorder (appends move the held head and reach observers).
        recorded_event_ids: The store's look-up of event ids it already holds.
        max_thought_bytes: Reads the ledger's largest accepted thought, in UTF-8 bytes.
    """

    def __init__(
        self,
        held: Held,
        recorder: Recorder,
        recorded_event_ids: Callable[[Collection[UUID]], Awaitable[set[UUID]]],
        max_thought_bytes: Callable[[], int],
    ) -> None:
        self._held = held
        self._recorder = recorder
        self._recorded = recorded_event_ids
        self._max_thought_bytes = max_thought_bytes
        # One capture at a time per session in this process, so that two requests carrying
        # the same span do not both decide it (the store would refuse the second anyway).
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiting: dict[str, int] = {}

    async def record(
        self, sessions: Mapping[str, Sequence[CapturedSpan]], *, owner: str | None
    ) -> CaptureReport:
        """Record the reasoning and actions of each session's spans, each part once.

        The sessions are appended to concurrently (a store that commits concurrent appends
        together, as SQLite's writer does, makes few transactions of many sessions' parts).
        Each append carries the parts' derived ids, and the store records an id once: an
        append holding a part already recorded is refused whole, and only then are the parts
        looked up (all the request's in one indexed query, whichever session is refused first)
        and the others appended (a retry costs a look-up; a new span costs none).

        Args:
            sessions: The spans of each session (ids a :class:`~thoughtledger.api.Scope` gave),
                in any order (they are ordered by start, then as given).
            owner: The principal recording; a session another owns is answered as not found.

        Returns:
            What was appended, and what was already there or refused.

        Raises:
            SessionNotFoundError: ``owner`` does not own a session; nothing was appended to it.
            ConcurrencyError: Other writers kept moving a session.
            InvalidInputError: The store refused a session's events for another reason than a
                part already recorded; nothing was appended to that session.
            StoreError: The store failed; nothing of the failed append was stored.
        """
        planned = {check_id(sid): _parts(sid, spans) for sid, spans in sessions.items()}
        may_change = owner_guard(owner, "write")
        gate = asyncio.Semaphore(_CONCURRENT)
        # A span sent again usually comes back whole (an exporter retrying its batch): every
        # session is refused at once, and one look-up of all the request's ids answers them.
        ids = [part.event_id for parts in planned.values() for part in parts]
        looked_up: list[asyncio.Future[set[UUID]]] = []

        async def recorded() -> set[UUID]:
            if not looked_up:
                looked_up.append(asyncio.ensure_future(self._recorded(ids)))
            return await asyncio.shield(looked_up[0])  # a cancelled session leaves it to others

        async def one(session_id: str, parts: list[_Part]) -> CaptureReport:
            async with gate, self._session(session_id):
                report = CaptureReport(sessions=[session_id])
                for start in range(0, len(parts), _CHUNK):
                    chunk = parts[start : start + _CHUNK]
                    report.add(await self._append(session_id, chunk, owner, may_change, recorded))
                return report

        done = await asyncio.gather(
            *(one(sid, parts) for sid, parts in planned.items() if parts),
            return_exceptions=True,
        )
        report = CaptureReport()
        failed: BaseException | None = None
        for outcome in done:
            if isinstance(outcome, BaseException):
                failed = failed or outcome
            else:
                report.add(outcome)
        if failed is not None:
            raise failed
        return report

    @contextlib.asynccontextmanager
    async def _session(self, session_id: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        self._waiting[session_id] = self._waiting.get(session_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._waiting[session_id] -= 1
            if not self._waiting[session_id]:  # no one holds or waits: forget the session
                del self._waiting[session_id], self._locks[session_id]

    async def _append(
        self,
        session_id: str,
        parts: Sequence[_Part],
        owner: str | None,
        may_change: Guard,
        recorded: Callable[[], Awaitable[set[UUID]]],
    ) -> CaptureReport:
        started_id = _event_id(session_id, "session.started")
        known: set[UUID] = set()
        fresh = look = False
        shared = True  # the first look-up is the request's own, one for all its sessions
        conflict: ConcurrencyError | None = None
        for attempt in range(_ATTEMPTS):
            state = await self._held.load(session_id, fresh=fresh)
            if state.version and not may_change(state.owner):
                raise not_found(session_id)
            looked = False  # whether the parts were looked up for this session, just now
            if look:  # a part may be recorded already: which ones
                if shared:
                    known, shared = await recorded(), False
                else:
                    known, looked = await self._recorded([part.event_id for part in parts]), True
                look = False
            new = [part for part in parts if part.event_id not in known]
            report = CaptureReport(duplicates=len(parts) - len(new))
            if not new:
                return report
            events, ids = _decide(
                state,
                new,
                owner=owner,
                started_id=started_id,
                max_thought_bytes=self._max_thought_bytes(),
                report=report,
            )
            if not any(isinstance(event, ThoughtCaptured | ActionTaken) for event in events):
                return report
            try:
                await self._recorder.append(state, events, event_ids=ids)
            except ConcurrencyError as exc:
                # Another writer (another process, or the same span sent again at once)
                # moved the session, and may have recorded these parts.
                fresh = look = True
                conflict = exc
                await asyncio.sleep(random.random() * min(0.05, 0.001 * 2**attempt))  # noqa: S311
                continue
            except InvalidInputError:
                # A part already recorded (a span sent again): look which, and append the
                # others; refused again after looking for this session alone, it is the
                # events' own fault (after the request's look-up, which may have come before
                # another writer's append, it looks again).
                if looked:
                    raise
                fresh = look = True
                continue
            return report
        assert conflict is not None  # noqa: S101  # the loop only ends early on success
        raise conflict


def _parts(session_id: str, spans: Sequence[CapturedSpan]) -> list[_Part]:
    parts: list[_Part] = []
    for span in sorted(spans, key=lambda span: span.started_ns):
        reasoning = [i for i, item in enumerate(span.parts) if isinstance(item, CapturedReasoning)]
        last = reasoning[-1] if reasoning else -1
        for index, item in enumerate(span.parts):
            event_id = _event_id(session_id, span.trace_id, span.span_id, index)
            parts.append(_Part(span, index, item, event_id, index == last))
    return parts


def group_by_session(spans: Sequence[CapturedSpan]) -> Mapping[str, list[CapturedSpan]]:
    """The spans grouped by their session key (see :attr:`CapturedSpan.session_key`)."""
    groups: dict[str, list[CapturedSpan]] = {}
    for span in spans:
        groups.setdefault(span.session_key, []).append(span)
    return groups


__all__ = [
    "OPAQUE_TEXT",
    "CaptureReport",
    "CapturedAction",
    "CapturedReasoning",
    "CapturedSpan",
    "Capturing",
    "group_by_session",
]
