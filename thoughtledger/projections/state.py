"""The session state every view is read from, and the fold that builds it from events."""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import NamedTuple, Protocol, assert_never

from thoughtledger.ledger.content import REDACTED
from thoughtledger.ledger.events import (
    BranchExtended,
    BranchOpened,
    Generation,
    LedgerEvent,
    SessionCleared,
    SessionExpired,
    SessionStarted,
    ThoughtAnnotated,
    ThoughtGenerated,
    ThoughtRecorded,
    ThoughtRedacted,
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
        return self.branch_id if self.kind in _BRANCH_KINDS else None

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
        return _NOTHING
    return MappingProxyType(
        {name: value for name in EXTRA_MARKS if (value := fields(name)) is not None}
    )


@dataclass(frozen=True, slots=True)
class Branch:
    """A branch: its id, the thought it forks from, and the versions of its thoughts in order."""

    branch_id: str
    from_thought: int
    versions: tuple[int, ...]


_NOTHING: Mapping[str, str] = MappingProxyType({})
_NO_BRANCHES: Mapping[str, "Branch"] = MappingProxyType({})


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
    """The annotation a ``thought.annotated`` record carries, as :func:`replay` holds it."""
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


class SessionState(NamedTuple):
    """Everything known about one session after some prefix of its events.

    A named tuple, like :class:`ThoughtEntry`: recording a thought builds a new state each time.

    Attributes:
        session_id: The session.
        version: How many of its events were folded.
        started_at: When its first event was recorded.
        updated_at: When its last folded event was recorded.
        metadata: Facts recorded when it started (client, agent, transport...).
        predecessor_id: The session it replaced after a clear, if any.
        owner: The principal that started it; ``None`` for the ledger's own user.
        thoughts: Every thought, in order (main line, revisions and branches alike); after
            :func:`trim`, only the most recent ones.
        thought_count: How many thoughts the session has, held or not.
        branches: Every branch, by id, in first-seen order (after :func:`trim`, each lists only
            the versions of held thoughts).
        ended: ``None`` while open; ``"cleared"`` or ``"expired"`` once retired.
        ended_version: The version of the event that retired it.
        started_version: The version of its ``session.started`` event (1 when recorded).
        redactions: The versions of its ``thought.redacted`` events, in order.
        annotations: Its annotations, in the order recorded (every one, even after
            :func:`trim`: they are few, and read with the session's head).
        fork: For a fork, where it came from (its first thoughts are the source's up to
            there, each with its ``source``); ``None`` otherwise.
    """

    session_id: str
    version: int = 0
    started_at: datetime | None = None
    updated_at: datetime | None = None
    metadata: Mapping[str, str] = _NOTHING
    predecessor_id: str | None = None
    thoughts: tuple[ThoughtEntry, ...] = ()
    branches: Mapping[str, Branch] = _NO_BRANCHES
    ended: str | None = None
    ended_version: int | None = None
    started_version: int | None = None
    thought_count: int = 0
    owner: str | None = None
    redactions: tuple[int, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    fork: ForkPoint | None = None

    @property
    def complete(self) -> bool:
        """Whether every thought is held (a state from :func:`trim` may hold only the latest)."""
        return len(self.thoughts) == self.thought_count

    @property
    def last(self) -> ThoughtEntry | None:
        """The most recent thought, if any."""
        return self.thoughts[-1] if self.thoughts else None

    @property
    def status(self) -> str:
        """``empty``, ``cleared``, ``expired``, or the last thought's status."""
        if self.ended is not None:
            return self.ended
        last = self.last
        return last.status if last is not None else "empty"

    @property
    def original_query(self) -> str | None:
        """The problem the session works on: its first thought's guidance, or its text.

        The MCP API reference's external tool takes a first thought as the problem itself; when a
        model wrote the first thought, the problem is what the caller sent (its guidance).
        """
        if not self.thoughts or not self.complete:
            return None
        first = self.thoughts[0]
        return first.guidance if first.guidance is not None else first.thought

    @property
    def revisions(self) -> int:
        """How many thoughts were recorded as revisions."""
        return sum(1 for t in self.thoughts if t.kind == "thought.revised")


_BRANCH_KINDS = frozenset({"branch.opened", "branch.extended"})


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


_ThoughtEvent = ThoughtRecorded | ThoughtRevised | BranchOpened | BranchExtended | ThoughtGenerated


def thought_entry(record: Folded) -> ThoughtEntry | None:
    """The thought ``record`` carries, exactly as :func:`replay` holds it; ``None`` if none.

    A thought's entry depends on its own event alone (its estimate is recorded already raised),
    which is what lets a page of a history be read without folding the events before it.
    """
    event = record.event
    if isinstance(
        event, ThoughtRecorded | ThoughtRevised | BranchOpened | BranchExtended | ThoughtGenerated
    ):
        return _entry(record, event)
    return None


def _entry(record: Folded, event: _ThoughtEvent) -> ThoughtEntry:
    guidance: str | None = None
    generation: Generation | None = None
    if isinstance(event, ThoughtGenerated):
        kind, guidance, generation = event.kind, event.guidance, event.generation
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
        more_marks(event.__dict__.get) if EXTRA_MARKS else _NOTHING,
    )


def redacted(entry: ThoughtEntry) -> ThoughtEntry:
    """``entry`` with its text (and guidance) redacted, as a stripped event reads back."""
    guidance = None if entry.guidance is None else REDACTED
    return entry._replace(thought=REDACTED, guidance=guidance, redacted=True)


def _redact(thoughts: tuple[ThoughtEntry, ...], versions: set[int]) -> tuple[ThoughtEntry, ...]:
    # A redaction names a version of this session: a thought a fork inherits has its source's.
    return tuple(
        redacted(t) if t.version in versions and not t.redacted and t.source is None else t
        for t in thoughts
    )


def empty(session_id: str) -> SessionState:
    """The state of a session before its first event."""
    return SessionState(session_id=session_id)


def fork_base(session_id: str, source: SessionState) -> SessionState:
    """The state a fork ``session_id`` starts from: ``source``'s thoughts, before its own events.

    Only the line of reasoning carries over (thoughts and branches, each thought marked with the
    session it was recorded in); who started it, when, and whether it ended are the fork's own,
    taken from its events.

    Args:
        session_id: The fork.
        source: The source's complete state as of the fork's version.
    """
    thoughts = tuple(
        t if t.source is not None else t._replace(source=source.session_id) for t in source.thoughts
    )
    return SessionState(
        session_id,
        thoughts=thoughts,
        branches=source.branches,
        thought_count=len(thoughts),
    )


def grafted(state: SessionState, source: SessionState) -> SessionState:
    """A fork's ``state`` folded from its own events alone, with ``source``'s thoughts first.

    What :func:`replay` onto :func:`fork_base` gives, for a fork folded without its source
    (a rebuild folds every session from the log at once).

    Args:
        state: The fork's state from its own events.
        source: The source's complete state as of the fork's version.
    """
    base = fork_base(state.session_id, source)
    branches = dict(base.branches)
    for branch_id, branch in state.branches.items():
        known = branches.get(branch_id)
        branches[branch_id] = (
            branch if known is None else replace(known, versions=known.versions + branch.versions)
        )
    return state._replace(
        thoughts=base.thoughts + state.thoughts,
        branches=MappingProxyType(branches),
        thought_count=base.thought_count + state.thought_count,
    )


def replay(records: Iterable[Folded], state: SessionState) -> SessionState:
    """Fold ``records`` (one session, in version order) onto ``state``.

    Builds the new thoughts into a local list and freezes once at the end, so replaying n events
    costs O(n); the held thoughts and branches are copied once, and branches only when one grows
    (recording a thought folds one event onto a state holding many: this is its hot path).
    """
    thoughts: list[ThoughtEntry] = []
    branches: dict[str, Branch] | None = None
    started_at, updated_at = state.started_at, state.updated_at
    metadata, predecessor, ended = state.metadata, state.predecessor_id, state.ended
    owner, fork = state.owner, state.fork
    ended_version, started_version = state.ended_version, state.started_version
    version = state.version
    redactions: list[tuple[int, int]] | None = None  # (version named, version of the redaction)
    annotations: list[Annotation] | None = None
    for record in records:
        version = record.version
        if started_at is None:
            started_at = record.recorded_at
        updated_at = record.recorded_at
        event = record.event
        match event:
            case SessionStarted():
                metadata = MappingProxyType(dict(event.metadata))
                predecessor = event.predecessor_id
                owner = event.owner
                started_version = record.version
                if event.fork_of is not None and event.fork_version and event.fork_hash:
                    fork = ForkPoint(event.fork_of, event.fork_version, event.fork_hash)
            case (
                ThoughtRecorded()
                | ThoughtRevised()
                | BranchOpened()
                | BranchExtended()
                | ThoughtGenerated()
            ):
                entry = _entry(record, event)
                thoughts.append(entry)
                if entry.kind in _BRANCH_KINDS:
                    if branches is None:
                        branches = dict(state.branches)
                    join_branch(branches, entry)
            case SessionCleared():
                ended, ended_version = "cleared", record.version
            case SessionExpired():
                ended, ended_version = "expired", record.version
            case ThoughtRedacted():
                # The text leaves the log after this event: a held copy leaves the view now.
                if redactions is None:
                    redactions = []
                redactions.append((event.version, record.version))
            case ThoughtAnnotated():
                # An annotation does not touch the line of reasoning: it is held beside it.
                if annotations is None:
                    annotations = []
                annotations.append(annotation_of(record, event))
            case _:
                assert_never(event)
    held = state.thoughts + tuple(thoughts) if thoughts else state.thoughts
    redaction_versions = state.redactions
    notes = state.annotations + tuple(annotations) if annotations else state.annotations
    if redactions:
        named = {named for named, _ in redactions}
        held = _redact(held, named)
        notes = tuple(
            a._replace(note=REDACTED, redacted=True) if a.version in named and not a.redacted else a
            for a in notes
        )
        redaction_versions += tuple(version for _, version in redactions)
    return SessionState(  # positional, in field order: one is built for every thought recorded
        state.session_id,
        version,
        started_at,
        updated_at,
        metadata,
        predecessor,
        held,
        state.branches if branches is None else MappingProxyType(branches),
        ended,
        ended_version,
        started_version,
        state.thought_count + len(thoughts),
        owner,
        redaction_versions,
        notes,
        fork,
    )


def trim(state: SessionState, keep: int) -> SessionState:
    """Return ``state`` holding only its latest ``keep`` thoughts (everything else unchanged).

    A trimmed state still answers every question about the session's head (its version, last
    thought, branch ids, counts, status), which is all a new thought needs; the full history stays
    in the log. This is what keeps a long-running server's memory bounded.
    """
    keep = max(keep, 1)  # the last thought is the head every answer is read from
    if len(state.thoughts) <= keep:
        return state
    held = state.thoughts[len(state.thoughts) - keep :]
    oldest = held[0].version if held else state.version + 1
    branches = {
        branch_id: replace(branch, versions=tuple(v for v in branch.versions if v >= oldest))
        for branch_id, branch in state.branches.items()
    }
    return state._replace(thoughts=held, branches=MappingProxyType(branches))


__all__ = [
    "EXTRA_MARKS",
    "Annotation",
    "Branch",
    "Folded",
    "ForkPoint",
    "SessionState",
    "Status",
    "ThoughtEntry",
    "annotation_of",
    "empty",
    "fork_base",
    "grafted",
    "join_branch",
    "more_marks",
    "redacted",
    "replay",
    "thought_entry",
    "trim",
]
