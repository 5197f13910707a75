"""A session's events as OpenTelemetry spans, following the GenAI semantic conventions.

Pure: no OpenTelemetry import, so that the mapping is tested and used without the extra. The
conventions followed are those of OpenTelemetry semantic conventions **v1.37.0** (GenAI, status
"Development"): one trace per session, a root span ``invoke_agent {agent}``, one
``execute_tool sequentialthinking`` span per thought, and a child ``chat {model}`` span with
``gen_ai.usage.*`` for a thought a model wrote. Revisions and branches have no convention: they
are ``thoughtledger.*`` attributes, with span links to the revised thought or the branch origin.
A reviewer's annotation is an event ``thoughtledger.thought.annotated`` of the root span (its
label, score, author and the annotated thought's span; its note only with content capture). An
action an agent took (a tool call captured from its telemetry) is an ``execute_tool {tool}`` span
of the root, as the conventions name a tool's execution, linked to the thought it followed (its
arguments only with content capture).

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from thoughtledger.api import LoopMark
from thoughtledger.ledger.envelope import EventRow, RecordedEvent
from thoughtledger.ledger.events import ANNOTATION_TYPE, THOUGHT_TYPES
from thoughtledger.ledger.thought import MARKS
from thoughtledger.projections.event_fields import Fields, decoded_fields, event_fields

SEMCONV_VERSION = "1.37.0"
"""The version of the OpenTelemetry semantic conventions these spans follow."""
SEMCONV_SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
TOOL_NAME = "sequentialthinking"
"""The tool each thought is a call of, as MCP clients name it."""

_ACTION = "action.taken"  # an action an agent took: a span of its own, execute_tool {tool}
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
OPT_IN_ENV = "OTEL_SEMCONV_STABILITY_OPT_IN"

Attributes = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SpanLink:
    """A link to another span of the same trace (a revised thought, a branch's origin)."""

    span_id: int
    attributes: Attributes


class SpanData(NamedTuple):
    """One span, as an exporter sends it (times in nanoseconds since the epoch, UTC).

    A named tuple: an export builds one per thought, and it is the cheapest immutable record.
    """

    trace_id: int
    span_id: int
    parent_span_id: int | None
    name: str
    kind: str
    """``internal`` or ``client`` (a call to a model provider)."""
    start_ns: int
    end_ns: int
    attributes: Attributes
    links: Sequence[SpanLink] = ()
    events: Sequence[tuple[str, int, Attributes]] = ()


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


def _ns(recorded_at: str) -> int:
    moment = datetime.fromisoformat(recorded_at)
    return (
        int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000
    )  # exact to the microsecond the ledger keeps


def session_spans(
    records: Sequence[RecordedEvent], conventions: Conventions, marks: Iterable[LoopMark] = ()
) -> list[SpanData]:
    """Return the spans of a whole session (its events, in version order), root first.

    Args:
        records: Every event of the session from version 1 (the ids derive from the first).
        conventions: What the environment asks for (content capture, attribute names).
        marks: The session's loop marks, as the ledger answers them (``ledger.loops.marks``).
    """
    if not records:
        return []
    rows = [EventRow.of(record) for record in records]
    trace = SessionTrace(rows[0], conventions)
    trace.learn(marks)
    spans = [span for row in rows for span in trace.add(row)]
    return [trace.root(), *spans]


_RETIRED = frozenset({"session.cleared", "session.expired"})
_BRANCHES = frozenset({"branch.opened", "branch.extended"})
_OFF_SPANS = frozenset({"needs_more_thoughts"})
"""Marks spans do not carry (a span never had this one; dashboards read the others)."""
_MARKS = tuple(mark.name for mark in MARKS if mark.name not in _OFF_SPANS)
"""The marks a thought's span carries, as ``thoughtledger.<name>``, from the definition."""


class SessionTrace:
    """One session's trace, built event by event (a whole export, or a server as it records).

    Takes each event as it is stored (:class:`~thoughtledger.ledger.envelope.EventRow`): the ids
    derive from its hashes, and only the few fields a span shows are read from its payload
    (:func:`thoughtledger.projections.event_fields.event_fields`).

    Args:
        first: The session's first event (version 1): its hash names the trace.
        conventions: What the environment asks for.

    Raises:
        EventDecodingError: The first event cannot be decoded.
    """

    def __init__(self, first: EventRow, conventions: Conventions) -> None:
        self.conventions = conventions
        self.session_id = first.session_id
        self.trace_id = trace_id_of(first.hash)
        self.root_id = root_span_id(first.hash)
        metadata = (
            event_fields(first).get("metadata") if first.event_type == "session.started" else None
        )
        self.metadata: dict[str, str] = dict(metadata or {})
        self._shared: Attributes = {
            "gen_ai.conversation.id": self.session_id,
            "session.id": self.session_id,
        }
        transport = self.metadata.get("transport")
        if transport in ("stdio", "http"):
            self._shared_tool: Attributes = {
                "mcp.method.name": "tools/call",
                "mcp.session.id": self.metadata.get("mcp_session", self.session_id),
            }
        else:
            self._shared_tool = {}
        self._first_ns = _ns(first.recorded_at)
        self._last = first
        self._last_ns = self._first_ns
        self._ended = False
        self._events = 0
        self._provider_seen: str | None = None
        self._marks: list[tuple[str, int, Attributes]] = []
        self._by_number: dict[tuple[str | None, int], int] = {}
        """The span of the latest thought with each (branch, number), for links."""
        self._repeated: dict[int, int] = {}
        """The version each repeat among the session's thoughts repeats (see :meth:`learn`)."""
        self._numbers: dict[int, int] = {}
        """Each thought's number by version (a repeat's span names the one it repeats)."""
        self._repeats = 0

    def learn(self, marks: Iterable[LoopMark]) -> None:
        """Take the session's loop marks (``ledger.loops.marks``) before adding their events."""
        self._repeated.update((mark.version, mark.repeats_version) for mark in marks)

    @property
    def version(self) -> int:
        """The version of the last event added (0 before the first)."""
        return self._last.version if self._events else 0

    @property
    def ended(self) -> bool:
        """Whether the session has ended: its last thought needs no next one, or it was retired."""
        return self._ended

    def add(self, row: EventRow) -> list[SpanData]:
        """Take the session's next event; return its spans (none for an event that is no thought).

        Events must come in version order, each once, from the first.

        Raises:
            EventDecodingError: The event cannot be decoded.
        """
        fields = event_fields(row)
        try:
            return self._add(row, fields)
        except (KeyError, TypeError, AttributeError):
            # A payload that parses but does not fit its model: decoding says what is wrong.
            return self._add(row, decoded_fields(row))

    def _add(self, row: EventRow, fields: Fields) -> list[SpanData]:
        previous_ns, at = self._last_ns, _ns(row.recorded_at)
        event_type = row.event_type
        if event_type in _RETIRED:
            self._last, self._last_ns, self._ended = row, at, True
            self._events += 1
            self._marks.append((f"thoughtledger.{event_type}", at, {}))
            return []
        if event_type == "thought.redacted":
            # A mark on the session, not a step of it: where and whether it ended stay as they were.
            self._last = row
            self._events += 1
            marked: Attributes = {"thoughtledger.redacted.version": fields["version"]}
            self._marks.append((f"thoughtledger.{event_type}", at, marked))
            return []
        if event_type == ANNOTATION_TYPE:
            # A reviewer's mark on a thought, added after its span was sent: an event of the
            # session's root span (like a redaction), naming the thought and its span.
            self._last = row
            self._events += 1
            self._marks.append((f"thoughtledger.{event_type}", at, self._annotation(row, fields)))
            return []
        if event_type not in THOUGHT_TYPES:
            self._last, self._last_ns, self._ended = row, at, False
            self._events += 1
            if event_type == _ACTION:
                return [self._action_span(row, fields, previous_ns, at)]
            return []
        spans = self._thought_spans(row, fields, previous_ns, at)
        self._last, self._last_ns = row, at
        self._ended = not fields["next_thought_needed"]
        self._events += 1
        return spans

    def _action_span(self, row: EventRow, fields: Fields, previous_ns: int, end: int) -> SpanData:
        """The ``execute_tool {tool}`` span of an action, linked to the thought it followed."""
        tool = fields["name"]
        attributes: Attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
            **self._shared,
            "thoughtledger.kind": _ACTION,
            "thoughtledger.event.version": row.version,
            "thoughtledger.event.hash": row.hash,
            "thoughtledger.event.prev_hash": row.prev_hash,
            # The span the agent's telemetry carried the call in (not one of this trace's).
            "thoughtledger.action.trace_id": fields["trace_id"],
            "thoughtledger.action.span_id": fields["span_id"],
        }
        if fields.get("call_id") is not None:
            attributes["gen_ai.tool.call.id"] = fields["call_id"]
        links = []
        after = fields.get("after_thought")
        if after is not None:
            attributes["thoughtledger.action.after_thought"] = after
            target = self._by_number.get((None, after))
            if target is not None:
                links.append(SpanLink(target, {"thoughtledger.link": "follows"}))
        if self.conventions.capture_content:
            # Arguments are content, as a thought's text is (the conventions make them opt-in).
            attributes["gen_ai.tool.call.arguments"] = fields.get("arguments", "")
            if fields.get("arguments_cut"):
                attributes["thoughtledger.action.arguments_cut"] = True
        return SpanData(
            trace_id=self.trace_id,
            span_id=_id(row.hash, 64),
            parent_span_id=self.root_id,
            name=f"execute_tool {tool}",
            kind="internal",
            start_ns=min(previous_ns, end),
            end_ns=end,
            attributes=attributes,
            links=links,
        )

    def _annotation(self, row: EventRow, fields: Fields) -> Attributes:
        number = fields["thought_number"]
        marked: Attributes = {
            "thoughtledger.annotation.version": row.version,
            "thoughtledger.annotation.thought_number": number,
            "thoughtledger.annotation.label": fields["label"],
        }
        target = self._by_number.get((None, number))
        if target is not None:
            marked["thoughtledger.annotation.span_id"] = f"{target:016x}"
        for name in ("score", "by"):
            if fields.get(name) is not None:
                marked[f"thoughtledger.annotation.{name}"] = fields[name]
        if fields.get("redacted"):
            marked["thoughtledger.annotation.redacted"] = True
        elif self.conventions.capture_content and fields.get("note"):
            # A note is content, as a thought's text is: sent only when content is captured.
            marked["thoughtledger.annotation.note"] = fields["note"]
        return marked

    def _provider(self, attributes: Attributes, provider: str) -> None:
        attributes["gen_ai.provider.name"] = provider
        if not self.conventions.latest_only:
            attributes["gen_ai.system"] = provider  # the name before v1.37.0

    def root(self) -> SpanData:
        """The ``invoke_agent`` span: the session from its first event to the last one added."""
        # The session's agent as every other view reads it: no agent, no name (the conventions
        # then name the span ``invoke_agent`` alone); the client is the client, below.
        agent = self.metadata.get("agent")
        provider = self._provider_seen or self.metadata.get("client", "thoughtledger")
        attributes: Attributes = {
            "gen_ai.operation.name": "invoke_agent",
            **({"gen_ai.agent.name": agent} if agent else {}),
            **self._shared,
            "thoughtledger.session.events": self._events,
            "thoughtledger.session.head_hash": self._last.hash,
        }
        if self._repeats:
            attributes["thoughtledger.session.repeats"] = self._repeats
        self._provider(attributes, provider)
        for key in ("client", "transport"):
            if key in self.metadata:
                attributes[f"thoughtledger.session.{key}"] = self.metadata[key]
        return SpanData(
            trace_id=self.trace_id,
            span_id=self.root_id,
            parent_span_id=None,
            name=f"invoke_agent {agent}" if agent else "invoke_agent",
            kind="internal",
            start_ns=self._first_ns,
            end_ns=self._last_ns,
            attributes=attributes,
            events=list(self._marks),
        )

    def _thought_spans(
        self, row: EventRow, fields: Fields, previous_ns: int, end: int
    ) -> list[SpanData]:
        """The ``execute_tool`` span of one thought, and its ``chat`` span if a model wrote it."""
        event_type = row.event_type
        number = fields["thought_number"]
        generation = fields["generation"] if event_type == "thought.generated" else None
        kind = fields["kind"] if generation is not None else event_type
        span_id = _id(row.hash, 64)
        start = min(previous_ns, end)
        attributes: Attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": TOOL_NAME,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": row.event_id,
            **self._shared,
            "thoughtledger.kind": kind,
            "thoughtledger.thought_number": number,
            "thoughtledger.total_thoughts": fields["total_thoughts"],
            "thoughtledger.next_thought_needed": fields["next_thought_needed"],
            "thoughtledger.event.version": row.version,
            "thoughtledger.event.hash": row.hash,
            "thoughtledger.event.prev_hash": row.prev_hash,
            **self._shared_tool,
        }
        if fields.get("redacted"):
            attributes["thoughtledger.redacted"] = True
        self._numbers[row.version] = number
        earlier = self._repeated.get(row.version)
        if earlier is not None:  # a loop: which earlier thought this one repeats, never its text
            self._repeats += 1
            attributes["thoughtledger.repeats.version"] = earlier
            if earlier in self._numbers:
                attributes["thoughtledger.repeats.thought_number"] = self._numbers[earlier]
        for name in _MARKS:
            value = fields.get(name)
            if value is not None:
                attributes[f"thoughtledger.{name}"] = value
        if self.conventions.capture_content:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(
                {"thought": fields["thought"], "thoughtNumber": number}, ensure_ascii=False
            )
        links = self._links(event_type, kind, fields)
        branch = fields.get("branch_id") if event_type in _BRANCHES else None
        self._by_number[branch, number] = span_id
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
        if generation is None:
            return [tool]
        if self._provider_seen is None:
            self._provider_seen = generation["provider"]
        chat = self._chat(row, fields, generation, span_id, end)
        if chat.start_ns < start:
            tool = tool._replace(start_ns=chat.start_ns)
        return [tool, chat]

    def _links(self, event_type: str, kind: str, fields: Fields) -> list[SpanLink]:
        links = []
        revised = fields.get("revises_thought")
        if revised is not None:
            target = self._by_number.get((fields.get("branch_id"), revised)) or self._by_number.get(
                (None, revised)
            )
            if target is not None:
                links.append(SpanLink(target, {"thoughtledger.link": "revises"}))
        if event_type == "branch.opened" or (
            event_type == "thought.generated" and kind == "branch.opened"
        ):
            origin = fields.get("branch_from_thought")
            target = None if origin is None else self._by_number.get((None, origin))
            if target is not None:
                links.append(SpanLink(target, {"thoughtledger.link": "branches_from"}))
        return links

    def _chat(
        self, row: EventRow, fields: Fields, generation: Fields, parent: int, end: int
    ) -> SpanData:
        model = generation["model"]
        attributes: Attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            **self._shared,
        }
        self._provider(attributes, generation["provider"])
        optional = {
            "gen_ai.response.model": generation.get("served_model"),
            "gen_ai.request.temperature": generation.get("temperature"),
            "gen_ai.response.id": generation.get("response_id"),
            "gen_ai.usage.input_tokens": generation.get("prompt_tokens"),
            "gen_ai.usage.output_tokens": generation.get("completion_tokens"),
            "thoughtledger.generation.cost": generation.get("cost"),
            "thoughtledger.generation.attempts": generation["attempts"],
            "thoughtledger.generation.prompt_sha256": generation["prompt_sha256"],
        }
        attributes.update({k: v for k, v in optional.items() if v is not None})
        finish_reason = generation.get("finish_reason")
        if finish_reason is not None:
            attributes["gen_ai.response.finish_reasons"] = [finish_reason]
        if self.conventions.capture_content:
            message = {
                "role": "assistant",
                "parts": [{"type": "text", "content": fields["thought"]}],
            }
            attributes["gen_ai.output.messages"] = json.dumps([message], ensure_ascii=False)
        return SpanData(
            trace_id=self.trace_id,
            span_id=_derived(row.hash, "chat"),
            parent_span_id=parent,
            name=f"chat {model}",
            kind="client",
            start_ns=end - generation["latency_ms"] * 1_000_000,
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
