"""The parts a session state holds, and how a recorded event becomes one.

Its thoughts, branches and annotations, and where a fork came from: what a page of a history
reads without folding the session before it.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import NamedTuple, Protocol

from thoughtledger.ledger.content import REDACTED
from thoughtledger.ledger.events import (
    BranchExtended,
    BranchOpened,
    Generation,
    LedgerEvent,
    SessionStarted,
    ThoughtAnnotated,
    ThoughtCaptured,
    ThoughtGenerated,
    ThoughtRecorded,
    ThoughtRevised,
)
from thoughtledger.ledger.thought import MARKS

Status = str
"""One of ``recorded``, ``revision``, ``branch``, ``complete`` (the MCP API reference's
``status``)."""


class ThoughtEntry(NamedTuple):
    """One recorded thought, with where and when it entered the log.

    A named tuple rather than a frozen dataclass: one is built for every thought recorded or
    read back, and a tuple is the cheapest immutable value Python builds (a tenth of the cost).

    Attributes:
        version: Its version in the session.
        position: Its global position in the log.
        recorded_at: When it was recorded.
        kind: What it is in the line of reasoning: the type of the event that carried it, or
            for a thought a model wrote, the type it was classified as (its ``kind`` field).
        thought: The text.
        thought_number: The number the caller gave it.
        total_thoughts: The estimate in force after it (raised to ``thought_number`` if lower).
        next_thought_needed: Whether the caller wanted another thought.
        is_revision: As given (``None`` when not given).
        revises_thought: As given.
        branch_from_thought: As given.
        branch_id: As given.
        needs_more_thoughts: As given.
        guidance: For a thought a model wrote, what the caller asked for (``None`` otherwise).
        generation: For a thought a model wrote, which model wrote it and how (``None`` for a
            thought written by the caller).
        redacted: Whether its text (and guidance) was redacted: they read ``[redacted]``.
        more: The marks given that have no attribute of their own here (a field added to the
            definition of a thought, :data:`EXTRA_MARKS`), by snake_case name.
        source: For a thought a fork inherits, the session it was recorded in (its
            ``version`` and ``position`` are that session's); ``None`` for the session's own.
    """

    version: int
    position: int
    recorded_at: datetime
    kind: str
    thought: str
    thought_number: int
    total_thoughts: int
    next_thought_needed: bool
    is_revision: bool | None
    revises_thought: int | None
    branch_from_thought: int | None
    branch_id: str | None
    needs_more_thoughts: bool | None
    guidance: str | None = None
    generation: Generation | None = None
    redacted: bool = False
    more: Mapping[str, object] = MappingProxyType({})
    source: str | None = None

    def mark(self, name: str) -> object:
        """The value of the mark ``name`` (``None`` when not given), attribute or not."""
        return getattr(self, name) if name in _ATTRIBUTES else self.more.get(name)

    @property
    def generated(self) -> bool:
        """Whether a language model wrote this thought."""
        return self.generation is not None

    @property
    def branch(self) -> str | None:
        """The branch this thought opens or extends (``None`` for the main line).

        A thought given a ``branch_id`` without ``branch_from_thought`` keeps its id but is on no
        branch: the official server registers a branch only when both are given.
        """
        return self.branch_id if self.kind in BRANCH_KINDS else None

    @property
    def status(self) -> Status:
        """This thought's status: ``complete`` once no next thought is needed, else its kind."""
        if not self.next_thought_needed:
            return "complete"
        if self.kind in ("branch.opened", "branch.extended"):
            return "branch"
        if self.kind == "thought.revised":
            return "revision"
        return "recorded"


_ATTRIBUTES = frozenset(ThoughtEntry._fields)
EXTRA_MARKS: tuple[str, ...] = tuple(m.name for m in MARKS if m.name not in _ATTRIBUTES)
"""The marks a :class:`ThoughtEntry` keeps in ``more`` (none but fields added since it was
written: each entry then carries them without an edit here)."""


def more_marks(fields: Callable[[str], object]) -> Mapping[str, object]:
    """The :data:`EXTRA_MARKS` given, each read by ``fields`` (a payload's or event's ``get``)."""
    if not EXTRA_MARKS:
        return NO_METADATA
    return MappingProxyType(
        {name: value for name in EXTRA_MARKS if (value := fields(name)) is not None}
    )


@dataclass(frozen=True, slots=True)
class Branch:
    """A branch: its id, the thought it forks from, and the versions of its thoughts in order."""

    branch_id: str
    from_thought: int
    versions: tuple[int, ...]


NO_METADATA: Mapping[str, str] = MappingProxyType({})
"""An empty mapping shared by every value that holds none (metadata, more marks)."""
NO_BRANCHES: Mapping[str, "Branch"] = MappingProxyType({})
"""The branches of a session that has none."""


class Annotation(NamedTuple):
    """A reviewer's annotation of a thought, as the fold holds it.

    Attributes:
        version: The version of its ``thought.annotated`` event.
        recorded_at: When it was recorded.
        thought_number: The annotated thought's number.
        label: Its label.
        score: Its score, if one was given.
        note: Its note (empty when none; :data:`REDACTED` once redacted).
        by: Who annotated (``None``: the ledger's own user, unnamed).
        redacted: Whether its note was redacted.
    """

    version: int
    recorded_at: datetime
    thought_number: int
    label: str
    score: float | None
    note: str
    by: str | None
    redacted: bool = False


def annotation_of(record: "Folded", event: ThoughtAnnotated) -> Annotation:
    """The annotation a ``thought.annotated`` record carries, as :func:`.state.replay` holds it."""
    return Annotation(
        record.version,
        record.recorded_at,
        event.thought_number,
        event.label,
        event.score,
        event.note,
        event.by,
        event.redacted,
    )


class ForkPoint(NamedTuple):
    """Where a fork came from: its source, the source's version and its event hash there."""

    session_id: str
    version: int
    hash: str


def fork_point_of(started: SessionStarted) -> ForkPoint | None:
    """Where the session a ``session.started`` event opens was forked from (``None``: no fork)."""
    if started.fork_of is not None and started.fork_version and started.fork_hash:
        return ForkPoint(started.fork_of, started.fork_version, started.fork_hash)
    return None


BRANCH_KINDS = frozenset({"branch.opened", "branch.extended"})
"""The kinds of the thoughts that open or extend a branch."""


class Folded(Protocol):
    """What the fold reads of a recorded event (``ledger.envelope.RecordedEvent`` is one)."""

    @property
    def version(self) -> int:
        """Its version in the session."""

    @property
    def position(self) -> int:
        """Its global position in the log."""

    @property
    def recorded_at(self) -> datetime:
        """When it was recorded."""

    @property
    def event(self) -> LedgerEvent:
        """The decoded event."""


def join_branch(branches: dict[str, Branch], entry: ThoughtEntry) -> None:
    """Record that ``entry``, a thought opening or extending a branch, belongs to its branch.

    ``branches`` is the fold's own working copy; the one rule for how a branch grows.
    """
    branch_id, origin = entry.branch_id, entry.branch_from_thought
    # Branch kinds always carry both (their models require them); the test is for mypy.
    if branch_id is None or origin is None:
        return
    known = branches.get(branch_id)
    if known is None:
        branches[branch_id] = Branch(branch_id, origin, (entry.version,))
    else:
        branches[branch_id] = replace(known, versions=(*known.versions, entry.version))


_ThoughtEvent = (
    ThoughtRecorded
    | ThoughtRevised
    | BranchOpened
    | BranchExtended
    | ThoughtGenerated
    | ThoughtCaptured
)


def thought_entry(record: Folded) -> ThoughtEntry | None:
    """The thought ``record`` carries, exactly as :func:`.state.replay` holds it; ``None`` if none.

    A thought's entry depends on its own event alone (its estimate is recorded already raised),
    which is what lets a page of a history be read without folding the events before it.
    """
    event = record.event
    if isinstance(event, _ThoughtEvent):
        return entry_of(record, event)
    return None


def entry_of(record: Folded, event: _ThoughtEvent) -> ThoughtEntry:
    """The entry of ``event``, a thought's, recorded as ``record`` (the fold's own step)."""
    guidance: str | None = None
    generation: Generation | None = None
    if isinstance(event, ThoughtGenerated):
        kind, guidance, generation = event.kind, event.guidance, event.generation
    elif isinstance(event, ThoughtCaptured):
        kind = "thought.recorded"  # captured reasoning is a plain step of the main line
    else:
        kind = event.type
    return ThoughtEntry(
        record.version,
        record.position,
        record.recorded_at,
        kind,
        event.thought,
        event.thought_number,
        event.total_thoughts,
        event.next_thought_needed,
        event.is_revision,
        event.revises_thought,
        event.branch_from_thought,
        event.branch_id,
        event.needs_more_thoughts,
        guidance,
        generation,
        event.redacted,
        more_marks(event.__dict__.get) if EXTRA_MARKS else NO_METADATA,
    )


def redacted(entry: ThoughtEntry) -> ThoughtEntry:
    """``entry`` with its text (and guidance) redacted, as a stripped event reads back."""
    guidance = None if entry.guidance is None else REDACTED
    return entry._replace(thought=REDACTED, guidance=guidance, redacted=True)


__all__ = [
    "BRANCH_KINDS",
    "EXTRA_MARKS",
    "NO_BRANCHES",
    "NO_METADATA",
    "Annotation",
    "Branch",
    "Folded",
    "ForkPoint",
    "Status",
    "ThoughtEntry",
    "annotation_of",
    "entry_of",
    "fork_point_of",
    "join_branch",
    "more_marks",
    "redacted",
    "thought_entry",
]
