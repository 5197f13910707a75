"""A session's events as OpenTelemetry spans, following the GenAI semantic conventions.

Pure: no OpenTelemetry import, so that the mapping is tested and used without the extra. The
conventions followed are those of OpenTelemetry semantic conventions **v1.37.0** (GenAI, status
"Development"): one trace per session, a root span ``invoke_agent {agent}``, one
``execute_tool sequentialthinking`` span per thought, and a child ``chat {model}`` span with
``gen_ai.usage.*`` for a thought a model wrote. Revisions and branches have no convention: they
are ``thoughtledger.*`` attributes, with span links to the revised thought or the branch origin.

``OTEL_SEMCONV_STABILITY_OPT_IN`` is honoured as the conventions ask of GenAI instrumentations:
with ``gen_ai_latest_experimental`` in it, only the v1.37.0 names are sent; without it, the
attributes that v1.37.0 renamed are sent under their previous name too (``gen_ai.system``
beside ``gen_ai.provider.name``), so that a backend still on the older conventions groups them.
Thought text is sent only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is true.

Every id is derived from the events' hashes (the trace's from the session's first event, each
span's from its event), and every time is the event's recorded time: exporting a session twice
sends the same spans, which a backend stores once.
"""

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledger.envelope import RecordedEvent
from ledger.events import (
    BranchExtended,
    BranchOpened,
    SessionCleared,
    SessionExpired,
    SessionStarted,
    ThoughtEvent,
    ThoughtGenerated,
    ThoughtRedacted,
)

SEMCONV_VERSION = "1.37.0"
"""The version of the OpenTelemetry semantic conventions these spans follow."""
SEMCONV_SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
TOOL_NAME = "sequentialthinking"
"""The tool each thought is a call of, as MCP clients name it."""

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
OPT_IN_ENV = "OTEL_SEMCONV_STABILITY_OPT_IN"

Attributes = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SpanLink:
    """A link to another span of the same trace (a revised thought, a branch's origin)."""

    span_id: int
    attributes: Attributes


@dataclass(frozen=True, slots=True)
class SpanData:
    """One span, as an exporter sends it (times in nanoseconds since the epoch, UTC)."""

    trace_id: int
    span_id: int
    parent_span_id: int | None
    name: str
    kind: str
    """``internal`` or ``client`` (a call to a model provider)."""
    start_ns: int
    end_ns: int
    attributes: Attributes
    links: list[SpanLink] = field(default_factory=list)
    events: list[tuple[str, int, Attributes]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Conventions:
    """What the environment asks of the spans (read once per export)."""

    capture_content: bool = False
    latest_only: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Conventions":
        """Read :data:`CAPTURE_ENV` and :data:`OPT_IN_ENV` (from ``os.environ`` by default)."""
        env = os.environ if env is None else env
        capture = env.get(CAPTURE_ENV, "").strip().lower() in ("true", "1", "yes")
        opted = {part.strip() for part in env.get(OPT_IN_ENV, "").split(",")}
        return cls(capture_content=capture, latest_only="gen_ai_latest_experimental" in opted)


def _id(text: str, bits: int) -> int:
    """An id of ``bits`` bits from hex text (never zero: zero means "no id" in OTLP)."""
    return int(text[: bits // 4], 16) or 1


def trace_id_of(first_hash: str) -> int:
    """The trace id of the session whose first event has ``first_hash``."""
    return _id(first_hash, 128)


def _derived(hash_: str, purpose: str) -> int:
    return _id(hashlib.sha256(f"{hash_}:{purpose}".encode()).hexdigest(), 64)


def root_span_id(first_hash: str) -> int:
    """The root (``invoke_agent``) span's id of the session whose first event has ``first_hash``."""
    return _derived(first_hash, "invoke_agent")


def _ns(record: RecordedEvent) -> int:
    moment = record.recorded_at
    return (
        int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000
    )  # exact to the microsecond the ledger keeps


def session_spans(records: Sequence[RecordedEvent], conventions: Conventions) -> list[SpanData]:
    """Return the spans of a whole session (its events, in version order), root first.

    Args:
        records: Every event of the session from version 1 (the ids derive from the first).
        conventions: What the environment asks for (content capture, attribute names).
    """
    if not records:
        return []
    trace = SessionTrace(records[0], conventions)
    spans = [span for record in records for span in trace.add(record)]
    return [trace.root(), *spans]


class SessionTrace:
    """One session's trace, built event by event (a whole export, or a server as it records).

    Args:
        first: The session's first event (version 1): its hash names the trace.
        conventions: What the environment asks for.
    """

    def __init__(self, first: RecordedEvent, conventions: Conventions) -> None:
        self.conventions = conventions
        self.session_id = first.session_id
        self.trace_id = trace_id_of(first.hash)
        self.root_id = root_span_id(first.hash)
        opened = first.event
        self.metadata: dict[str, str] = (
            dict(opened.metadata) if isinstance(opened, SessionStarted) else {}
        )
        self._first = first
        self._last = first
        self._events = 0
        self._provider_seen: str | None = None
        self._marks: list[tuple[str, int, Attributes]] = []
        self._by_number: dict[tuple[str | None, int], int] = {}
        """The span of the latest thought with each (branch, number), for links."""

    @property
    def ended(self) -> bool:
        """Whether the session has ended: its last thought needs no next one, or it was retired."""
        event = self._last.event
        if isinstance(event, SessionCleared | SessionExpired):
            return True
        return hasattr(event, "next_thought_needed") and not event.next_thought_needed

    def add(self, record: RecordedEvent) -> list[SpanData]:
        """Take the session's next event; return its spans (none for an event that is no thought).

        Events must come in version order, each once, from the first.
        """
        event = record.event
        self._events += 1
        if isinstance(event, ThoughtRedacted):
            # A mark on the session, not a step of it: the session's end stays where it was.
            attributes: Attributes = {"thoughtledger.redacted.version": event.version}
            self._marks.append((f"thoughtledger.{event.type}", _ns(record), attributes))
            return []
        previous, self._last = self._last, record
        if isinstance(event, SessionCleared | SessionExpired):
            self._marks.append((f"thoughtledger.{event.type}", _ns(record), {}))
            return []
        if not hasattr(event, "thought_number"):
            return []
        if isinstance(event, ThoughtGenerated) and self._provider_seen is None:
            self._provider_seen = event.generation.provider
        return self._thought_spans(record, previous)

    def _shared(self) -> Attributes:
        return {"gen_ai.conversation.id": self.session_id, "session.id": self.session_id}

    def _provider(self, attributes: Attributes, provider: str) -> None:
        attributes["gen_ai.provider.name"] = provider
        if not self.conventions.latest_only:
            attributes["gen_ai.system"] = provider  # the name before v1.37.0

    def root(self) -> SpanData:
        """The ``invoke_agent`` span: the session from its first event to the last one added."""
        agent = self.metadata.get("agent") or self.metadata.get("client") or "thoughtledger"
        provider = self._provider_seen or self.metadata.get("client", "thoughtledger")
        attributes: Attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            **self._shared(),
            "thoughtledger.session.events": self._events,
            "thoughtledger.session.head_hash": self._last.hash,
        }
        self._provider(attributes, provider)
        for key in ("client", "transport"):
            if key in self.metadata:
                attributes[f"thoughtledger.session.{key}"] = self.metadata[key]
        return SpanData(
            trace_id=self.trace_id,
            span_id=self.root_id,
            parent_span_id=None,
            name=f"invoke_agent {agent}",
            kind="internal",
            start_ns=_ns(self._first),
            end_ns=_ns(self._last),
            attributes=attributes,
            events=list(self._marks),
        )

    def _thought_spans(self, record: RecordedEvent, previous: RecordedEvent) -> list[SpanData]:
        """The ``execute_tool`` span of one thought, and its ``chat`` span if a model wrote it."""
        event: ThoughtEvent = record.event  # type: ignore[assignment]  # add() keeps thoughts
        span_id = _id(record.hash, 64)
        end = _ns(record)
        start = min(_ns(previous), end)
        kind = event.kind if isinstance(event, ThoughtGenerated) else event.type
        attributes: Attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": TOOL_NAME,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": str(record.event_id),
            **self._shared(),
            "thoughtledger.kind": kind,
            "thoughtledger.thought_number": event.thought_number,
            "thoughtledger.total_thoughts": event.total_thoughts,
            "thoughtledger.next_thought_needed": event.next_thought_needed,
            "thoughtledger.event.version": record.version,
            "thoughtledger.event.hash": record.hash,
            "thoughtledger.event.prev_hash": record.prev_hash,
        }
        if event.redacted:
            attributes["thoughtledger.redacted"] = True
        transport = self.metadata.get("transport")
        if transport in ("stdio", "http"):
            attributes["mcp.method.name"] = "tools/call"
            attributes["mcp.session.id"] = self.metadata.get("mcp_session", self.session_id)
        for name in ("is_revision", "revises_thought", "branch_from_thought", "branch_id"):
            value = getattr(event, name, None)
            if value is not None:
                attributes[f"thoughtledger.{name}"] = value
        if self.conventions.capture_content:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(
                {"thought": event.thought, "thoughtNumber": event.thought_number},
                ensure_ascii=False,
            )
        links = self._links(event)
        branch = event.branch_id if isinstance(event, BranchOpened | BranchExtended) else None
        self._by_number[branch, event.thought_number] = span_id
        spans = []
        if isinstance(event, ThoughtGenerated):
            chat = self._chat(record, event, span_id, end)
            start = min(start, chat.start_ns)
            spans.append(chat)
        tool = SpanData(
            trace_id=self.trace_id,
            span_id=span_id,
            parent_span_id=self.root_id,
            name=f"execute_tool {TOOL_NAME}",
            kind="internal",
            start_ns=start,
            end_ns=end,
            attributes=attributes,
            links=links,
        )
        return [tool, *spans]

    def _links(self, event: ThoughtEvent) -> list[SpanLink]:
        links = []
        revised = event.revises_thought
        if revised is not None:
            target = self._by_number.get((event.branch_id, revised)) or self._by_number.get(
                (None, revised)
            )
            if target is not None:
                links.append(SpanLink(target, {"thoughtledger.link": "revises"}))
        if isinstance(event, BranchOpened) or (
            isinstance(event, ThoughtGenerated) and event.kind == "branch.opened"
        ):
            origin = event.branch_from_thought
            target = None if origin is None else self._by_number.get((None, origin))
            if target is not None:
                links.append(SpanLink(target, {"thoughtledger.link": "branches_from"}))
        return links

    def _chat(
        self, record: RecordedEvent, event: ThoughtGenerated, parent: int, end: int
    ) -> SpanData:
        generation = event.generation
        attributes: Attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": generation.model,
            **self._shared(),
        }
        self._provider(attributes, generation.provider)
        optional = {
            "gen_ai.response.model": generation.served_model,
            "gen_ai.request.temperature": generation.temperature,
            "gen_ai.response.id": generation.response_id,
            "gen_ai.usage.input_tokens": generation.prompt_tokens,
            "gen_ai.usage.output_tokens": generation.completion_tokens,
            "thoughtledger.generation.cost": generation.cost,
            "thoughtledger.generation.attempts": generation.attempts,
            "thoughtledger.generation.prompt_sha256": generation.prompt_sha256,
        }
        attributes.update({k: v for k, v in optional.items() if v is not None})
        if generation.finish_reason is not None:
            attributes["gen_ai.response.finish_reasons"] = [generation.finish_reason]
        if self.conventions.capture_content:
            message = {"role": "assistant", "parts": [{"type": "text", "content": event.thought}]}
            attributes["gen_ai.output.messages"] = json.dumps([message], ensure_ascii=False)
        return SpanData(
            trace_id=self.trace_id,
            span_id=_derived(record.hash, "chat"),
            parent_span_id=parent,
            name=f"chat {generation.model}",
            kind="client",
            start_ns=end - generation.latency_ms * 1_000_000,
            end_ns=end,
            attributes=attributes,
        )


__all__ = [
    "CAPTURE_ENV",
    "OPT_IN_ENV",
    "SEMCONV_SCHEMA_URL",
    "SEMCONV_VERSION",
    "TOOL_NAME",
    "Conventions",
    "SessionTrace",
    "SpanData",
    "SpanLink",
    "root_span_id",
    "session_spans",
    "trace_id_of",
]
