"""Events: the facts thoughtledger records, one immutable pydantic model per fact.

Each event is stored under a stable, dotted ``type`` string that never changes once released.
Payloads carry no storage metadata (position, version, time, hashes): the store wraps them in an
envelope.
A change of shape bumps ``schema_version`` and adds one upcast step in
:mod:`thoughtledger.ledger.codec`.
"""

from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, model_validator

from thoughtledger.ledger.thought import ThoughtCore, ThoughtMarks
from thoughtledger.ledger.thought_types import Count, Text

PAYLOAD_SCHEMA_VERSION = 2
"""The version of the events' payloads this code writes (each stored event carries its own; the
database's tables have theirs: :data:`thoughtledger.ledger.store.schema.DATABASE_SCHEMA_VERSION`).

Version 2 stores a thought's text apart, under a salted digest, so that it can be redacted
without breaking a hash (see :mod:`thoughtledger.ledger.content`); every other event is laid out as
in version 1, and version 1 events keep decoding and verifying as they were written."""

REDACTABLE_FROM = 2
"""The first payload schema version whose thought events can be redacted."""

MAX_REASON_CHARS = 1000
"""The longest reason a redaction records."""


class Event(BaseModel):
    """Base of every event: frozen, closed to unknown fields, versioned."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)

    schema_version: int = PAYLOAD_SCHEMA_VERSION


class SessionStarted(Event):
    """A session was opened; ``metadata`` holds free-form facts about who opened it.

    Typical keys: ``client`` (client software), ``agent`` (agent name), ``transport``
    (``stdio``, ``http``, ``in-process``), ``tool`` (which tool shape the caller used).
    """

    type: Literal["session.started"] = "session.started"
    metadata: dict[str, str] = Field(default_factory=dict)
    predecessor_id: str | None = None
    """The session this one replaces after a clear, if any."""
    owner: str | None = None
    """The principal that started it (an authenticated HTTP caller); ``None`` when the ledger's
    own user did (stdio, the Python API, HTTP without authentication)."""
    fork_of: str | None = None
    """The session this one was forked from, if any: its state is that session's as of
    ``fork_version``, then its own thoughts (nothing is copied)."""
    fork_version: Count | None = None
    """The source's version the fork starts from."""
    fork_hash: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """The source's event hash at ``fork_version``: ``verify`` fails a fork whose source no
    longer has it there."""

    @model_validator(mode="after")
    def _fork_is_whole(self) -> "SessionStarted":
        given = (self.fork_of, self.fork_version, self.fork_hash)
        if any(v is not None for v in given) and any(v is None for v in given):
            raise ValueError("a fork names its source, the version and the hash together")
        return self


class _Requested(BaseModel):
    model_config = ConfigDict(defer_build=True)

    requested_total_thoughts: Count | None = None
    """The caller's estimate when it was raised; ``None`` when it was kept as sent."""


# Bases listed last come first in the payload: the core, the requested estimate, the marks.
class _ThoughtFacts(ThoughtMarks, _Requested, ThoughtCore, Event):
    """Every field a sequential-thinking call accepts, kept as given (nothing is dropped).

    The fields are defined once, in :mod:`thoughtledger.ledger.thought`.
    """

    redacted: bool = Field(default=False, exclude=True)
    """Whether the text was redacted (read back as ``[redacted]``); never stored in a payload:
    a stored thought is redacted when its content member is gone (see
    :mod:`thoughtledger.ledger.content`)."""


class ThoughtRecorded(_ThoughtFacts):
    """A thought was added to the main line of reasoning."""

    type: Literal["thought.recorded"] = "thought.recorded"


class ThoughtRevised(_ThoughtFacts):
    """A thought was recorded that revises an earlier one (``revises_thought``, when given)."""

    type: Literal["thought.revised"] = "thought.revised"


class BranchOpened(_ThoughtFacts):
    """The first thought of a new branch ``branch_id``, forking from ``branch_from_thought``."""

    type: Literal["branch.opened"] = "branch.opened"
    branch_from_thought: Count
    branch_id: str


class BranchExtended(_ThoughtFacts):
    """A further thought on an existing branch ``branch_id``."""

    type: Literal["branch.extended"] = "branch.extended"
    branch_from_thought: Count
    branch_id: str


ThoughtKind: TypeAlias = Literal[
    "thought.recorded", "thought.revised", "branch.opened", "branch.extended"
]
"""How a thought is classified: the type of the event that carries a thought written by hand."""


class Generation(BaseModel):
    """How a language model wrote a thought: who, with which settings, from what, at what cost.

    Everything here was observed, never inferred: a figure the provider did not report is
    ``None``. The prompt itself is not stored (it is rebuilt from the session, see
    ``context_version``); its hash is, so an audit can check a rebuilt prompt against it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)

    model: str
    """The model asked for, after resolving an alias such as ``normal``."""
    provider: str
    """Which endpoint answered: ``openai``, ``openrouter`` or ``local`` (a compatible server)."""
    served_model: str | None = None
    """The model the provider says answered, when it says (often a dated version of ``model``)."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """The temperature sent; ``None`` when the model accepts only its default and none was sent."""
    prompt_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """SHA-256 of the messages sent, as compact JSON with sorted keys (UTF-8)."""
    prompt_version: int = Field(default=1, ge=1)
    """Which version of the prompt builder wrote the prompt (to rebuild it for an audit)."""
    context_version: int = Field(ge=0)
    """The session version the prompt was built from (its state after that many events)."""
    structured: bool
    """Whether the answer came as the structured JSON asked for (else taken as plain text)."""
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    cost: float | None = Field(default=None, ge=0)
    """What the provider says the call cost (OpenRouter reports it, in US dollars)."""
    latency_ms: int = Field(ge=0)
    """Wall time of the request that answered, in milliseconds (failed attempts excluded)."""
    attempts: int = Field(ge=1)
    """Requests made, the answering one included (retries after 429s, 5xx and timeouts)."""
    finish_reason: str | None = None
    response_id: str | None = None
    """The provider's id for the completion, to find it in the provider's own logs."""
    confidence: float | None = Field(default=None, ge=0, le=1)
    """The model's own confidence in the thought, when it gave one (never invented)."""
    reasoning_hint: str | None = None
    """The model's suggestion for the next step, when it gave one."""


class ThoughtGenerated(_ThoughtFacts):
    """A thought written by a language model, with the caller's guidance and how it was written.

    ``thought`` is the model's text; ``guidance`` is what the caller sent as ``thought`` (on a
    session's first thought: the problem). ``kind`` is what the thought is in the line of
    reasoning (a plain thought, a revision, a branch opened or extended), classified exactly as
    a thought written by hand would be. One event, appended atomically: a generation is either
    wholly recorded or not at all.
    """

    type: Literal["thought.generated"] = "thought.generated"
    kind: ThoughtKind
    guidance: str
    generation: Generation

    @model_validator(mode="after")
    def _branch_has_its_origin(self) -> "ThoughtGenerated":
        if self.kind in ("branch.opened", "branch.extended") and (
            self.branch_id is None or self.branch_from_thought is None
        ):
            raise ValueError(f"a {self.kind} thought needs branch_id and branch_from_thought")
        return self


CaptureForm: TypeAlias = Literal["full", "summary", "opaque"]
"""What a captured reasoning part holds: the model's ``full`` reasoning, a ``summary`` of it, or
an ``opaque`` part (encrypted or redacted by the provider) of which only a digest is kept."""

_HEX_SHA256 = r"^[0-9a-f]{64}$"


class Capture(BaseModel):
    """Where a captured thought came from: the span that carried it, and what it says of the call.

    Everything here was read from the sender's span, never inferred: what the sender did not
    say is ``None``. Signatures and encrypted content are kept only as SHA-256 digests.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)

    form: CaptureForm
    dialect: str = Field(max_length=64)
    """How the sender wrote it (``semconv``, ``thinking``, ``openinference``)."""
    trace_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    span_id: str = Field(pattern=r"^[0-9a-f]{16}$")
    part: int = Field(ge=0)
    """The part's index among the span's reasoning parts and tool calls."""
    provider: str | None = Field(default=None, max_length=256)
    model: str | None = Field(default=None, max_length=256)
    response_id: str | None = Field(default=None, max_length=256)
    reasoning_tokens: int | None = Field(default=None, ge=0)
    """The call's reasoning-token count, when the sender reported one."""
    signature_sha256: str | None = Field(default=None, pattern=_HEX_SHA256)
    """Digest of the provider's signature of the reasoning (the signature is never stored)."""
    opaque_sha256: str | None = Field(default=None, pattern=_HEX_SHA256)
    """Digest of an opaque part's encrypted content (the content is never stored)."""
    opaque_bytes: int | None = Field(default=None, ge=0)


class ThoughtCaptured(_ThoughtFacts):
    """A thought read from an agent's own reasoning, as its telemetry sent it (not a tool call).

    Captured thoughts follow each other on the main line; ``capture`` says where each came from.
    """

    type: Literal["thought.captured"] = "thought.captured"
    capture: Capture


MAX_ACTION_ARGUMENTS_CHARS = 8192
"""The longest arguments an action keeps (JSON text; longer ones are cut and marked)."""


class ActionTaken(Event):
    """A tool call an agent made, linked to the thought it followed (captured from telemetry)."""

    type: Literal["action.taken"] = "action.taken"
    name: str = Field(min_length=1, max_length=256)
    call_id: str | None = Field(default=None, max_length=256)
    arguments: str = Field(default="", max_length=MAX_ACTION_ARGUMENTS_CHARS)
    """The call's arguments as the sender gave them (JSON text, possibly cut)."""
    arguments_cut: bool = False
    after_thought: Count | None = None
    """The number of the thought this action followed, when one came before it."""
    trace_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    span_id: str = Field(pattern=r"^[0-9a-f]{16}$")
    part: int = Field(ge=0)


class SessionCleared(Event):
    """The session was cleared: its history stays in the log, its id is retired."""

    type: Literal["session.cleared"] = "session.cleared"
    reason: str | None = None
    successor_id: str | None = None
    """The session that continues the work, if one was started."""


class SessionExpired(Event):
    """The session was noticed idle past its time-to-live; its history stays in the log."""

    type: Literal["session.expired"] = "session.expired"
    idle_seconds: float = Field(ge=0)
    ttl_seconds: float = Field(gt=0)


class ThoughtRedacted(Event):
    """A thought's text (and guidance) was removed from the log, by whom and why.

    Names the redacted event by id and version; its hash, numbers and times stay, and so does
    the digest its text was committed to. Written before the text is removed, so the log never
    holds a removed text without the event that explains it.
    """

    type: Literal["thought.redacted"] = "thought.redacted"
    event_id: str = Field(pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
    """The redacted event's id."""
    version: Count
    """The redacted event's version in the session."""
    thought_number: Count
    """The redacted thought's number."""
    by: str = Field(min_length=1, max_length=256)
    """Who redacted it: the operating-system user of the CLI, or a principal's name."""
    reason: str = Field(min_length=1, max_length=MAX_REASON_CHARS)
    """Why (an erasure request, a secret pasted into a prompt...)."""


MAX_LABEL_CHARS = 64
"""The longest label an annotation carries."""
LABEL_PATTERN = r"^[\w][\w.:/-]*$"
"""What a label may hold: letters, digits and ``_.:/-``, starting with a letter or digit (it is a
filter, a column value and a statistic's key, so no spaces or controls)."""
MAX_NOTE_CHARS = 10_000
"""The longest note an annotation carries."""
MAX_SCORE = 1_000_000.0
"""The largest score (in absolute value) an annotation carries."""


class ThoughtAnnotated(Event):
    """A reviewer annotated a thought: a label, an optional score and note, and who wrote it.

    Names the thought by its number (every event carrying that number: the main line and its
    branches). The note is redactable as a thought's text is: it is stored apart under a salted
    digest (see :mod:`thoughtledger.ledger.content`), and a ``thought.redacted`` event naming
    this event's version removes it while every hash still verifies.
    """

    type: Literal["thought.annotated"] = "thought.annotated"
    thought_number: Count
    """The annotated thought's number."""
    label: str = Field(min_length=1, max_length=MAX_LABEL_CHARS, pattern=LABEL_PATTERN)
    """A short name of the finding (``wrong``, ``good-step``, ``hallucination``...)."""
    score: float | None = Field(default=None, ge=-MAX_SCORE, le=MAX_SCORE, allow_inf_nan=False)
    """A number the reviewer gives, when it gives one."""
    by: str | None = Field(default=None, max_length=256)
    """Who annotated: a principal's name, or the ledger's own user (``None``: unknown)."""
    note: str = Field(default="", max_length=MAX_NOTE_CHARS)
    """Why (free text, redactable; empty when none was given)."""
    redacted: bool = Field(default=False, exclude=True)
    """Whether the note was redacted (read back as ``[redacted]``); never stored in a payload."""


ThoughtEvent: TypeAlias = (
    ThoughtRecorded
    | ThoughtRevised
    | BranchOpened
    | BranchExtended
    | ThoughtGenerated
    | ThoughtCaptured
)
"""Events that carry a thought."""

LedgerEvent: TypeAlias = Annotated[
    SessionStarted
    | ThoughtRecorded
    | ThoughtRevised
    | BranchOpened
    | BranchExtended
    | ThoughtGenerated
    | SessionCleared
    | SessionExpired
    | ThoughtRedacted
    | ThoughtAnnotated
    | ThoughtCaptured
    | ActionTaken,
    Field(discriminator="type"),
]
"""Any event thoughtledger records, discriminated by ``type``."""

EVENT_TYPES: dict[str, type[Event]] = {
    "session.started": SessionStarted,
    "thought.recorded": ThoughtRecorded,
    "thought.revised": ThoughtRevised,
    "branch.opened": BranchOpened,
    "branch.extended": BranchExtended,
    "thought.generated": ThoughtGenerated,
    "session.cleared": SessionCleared,
    "session.expired": SessionExpired,
    "thought.redacted": ThoughtRedacted,
    "thought.annotated": ThoughtAnnotated,
    "thought.captured": ThoughtCaptured,
    "action.taken": ActionTaken,
}
"""Every stored type string and the model it decodes to."""

THOUGHT_TYPES = frozenset(
    {
        "thought.recorded",
        "thought.revised",
        "branch.opened",
        "branch.extended",
        "thought.generated",
        "thought.captured",
    }
)
"""Stored types of the events that carry a thought."""

ANNOTATION_TYPE = "thought.annotated"
"""The stored type of an annotation."""

ACTION_TYPE = "action.taken"
"""The stored type of an action an agent took."""

REDACTABLE_TYPES = THOUGHT_TYPES | {ANNOTATION_TYPE}
"""Stored types whose payload (from schema 2) keeps a redactable text apart: thoughts and
annotations' notes."""

__all__ = [
    "ACTION_TYPE",
    "ANNOTATION_TYPE",
    "EVENT_TYPES",
    "LABEL_PATTERN",
    "MAX_ACTION_ARGUMENTS_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_NOTE_CHARS",
    "MAX_REASON_CHARS",
    "MAX_SCORE",
    "PAYLOAD_SCHEMA_VERSION",
    "REDACTABLE_FROM",
    "REDACTABLE_TYPES",
    "THOUGHT_TYPES",
    "ActionTaken",
    "BranchExtended",
    "BranchOpened",
    "Capture",
    "CaptureForm",
    "Count",
    "Event",
    "Generation",
    "LedgerEvent",
    "SessionCleared",
    "SessionExpired",
    "SessionStarted",
    "Text",
    "ThoughtAnnotated",
    "ThoughtCaptured",
    "ThoughtEvent",
    "ThoughtGenerated",
    "ThoughtKind",
    "ThoughtRecorded",
    "ThoughtRedacted",
    "ThoughtRevised",
]
