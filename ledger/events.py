"""Events: the facts thoughtledger records, one immutable pydantic model per fact.

Each event is stored under a stable, dotted ``type`` string that never changes once released.
Payloads carry no storage metadata (position, version, time, hashes): the store wraps them in an
envelope.
A change of shape bumps ``schema_version`` and adds one upcast step in :mod:`ledger.codec`.
"""

from typing import Annotated, Literal, TypeAlias

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter

SCHEMA_VERSION = 1
"""The payload schema version this code writes."""


def _encodable(value: str) -> str:
    # Lone surrogates survive in Python strings but cannot be stored as UTF-8 or hashed; reject them
    # here so the failure is a validation error at the edge, not an encoding error inside a commit.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text contains an unpaired surrogate at index {exc.start}; send valid Unicode"
        ) from exc
    return value


Text = Annotated[str, AfterValidator(_encodable)]
"""A string that is valid Unicode (encodable as UTF-8); NUL characters are allowed.

Commands use it to reject bad text at the edge with a clear message. Events use plain ``str``:
decoding them is the hot loop of every replay, JSON cannot carry a lone surrogate anyway, and
the store's encoder refuses one (see :func:`ledger.codec.encode_payload`)."""

Count = Annotated[int, Field(ge=1)]
"""A thought number or estimate: a whole number of at least 1."""


class Event(BaseModel):
    """Base of every event: frozen, closed to unknown fields, versioned."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    schema_version: int = SCHEMA_VERSION


class SessionStarted(Event):
    """A session was opened; ``metadata`` holds free-form facts about who opened it.

    Typical keys: ``client`` (client software), ``agent`` (agent name), ``transport``
    (``stdio``, ``http``, ``in-process``), ``tool`` (which tool shape the caller used).
    """

    type: Literal["session.started"] = "session.started"
    metadata: dict[str, str] = Field(default_factory=dict)
    predecessor_id: str | None = None
    """The session this one replaces after a clear, if any."""


class _ThoughtFacts(Event):
    """Every field a sequential-thinking call accepts, kept as given (nothing is dropped)."""

    thought: str
    thought_number: Count
    total_thoughts: Count
    """The estimate in force after this thought (raised to ``thought_number`` when lower)."""
    next_thought_needed: bool
    requested_total_thoughts: Count | None = None
    """The caller's estimate when it was raised; ``None`` when it was kept as sent."""
    needs_more_thoughts: bool | None = None
    is_revision: bool | None = None
    revises_thought: Count | None = None
    branch_from_thought: Count | None = None
    branch_id: str | None = None


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


ThoughtEvent: TypeAlias = ThoughtRecorded | ThoughtRevised | BranchOpened | BranchExtended
"""Events that carry a thought."""

LedgerEvent: TypeAlias = Annotated[
    SessionStarted
    | ThoughtRecorded
    | ThoughtRevised
    | BranchOpened
    | BranchExtended
    | SessionCleared
    | SessionExpired,
    Field(discriminator="type"),
]
"""Any event thoughtledger records, discriminated by ``type``."""

EVENT_ADAPTER: TypeAdapter[LedgerEvent] = TypeAdapter(LedgerEvent)

EVENT_TYPES: dict[str, type[Event]] = {
    "session.started": SessionStarted,
    "thought.recorded": ThoughtRecorded,
    "thought.revised": ThoughtRevised,
    "branch.opened": BranchOpened,
    "branch.extended": BranchExtended,
    "session.cleared": SessionCleared,
    "session.expired": SessionExpired,
}
"""Every stored type string and the model it decodes to."""

THOUGHT_TYPES = frozenset(
    {"thought.recorded", "thought.revised", "branch.opened", "branch.extended"}
)

__all__ = [
    "EVENT_ADAPTER",
    "EVENT_TYPES",
    "SCHEMA_VERSION",
    "THOUGHT_TYPES",
    "BranchExtended",
    "BranchOpened",
    "Count",
    "Event",
    "LedgerEvent",
    "SessionCleared",
    "SessionExpired",
    "SessionStarted",
    "Text",
    "ThoughtEvent",
    "ThoughtRecorded",
    "ThoughtRevised",
]
