"""The session state every view is read from, and the fold that builds it from events."""

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType
from typing import NamedTuple, assert_never

from thoughtledger.ledger.content import REDACTED
from thoughtledger.ledger.events import (
    ActionTaken,
    BranchExtended,
    BranchOpened,
    SessionCleared,
    SessionExpired,
    SessionStarted,
    ThoughtAnnotated,
    ThoughtCaptured,
    ThoughtGenerated,
    ThoughtRecorded,
    ThoughtRedacted,
    ThoughtRevised,
)
from thoughtledger.projections.entries import (
    BRANCH_KINDS,
    NO_BRANCHES,
    NO_METADATA,
    Annotation,
    Branch,
    Folded,
    ForkPoint,
    ThoughtEntry,
    annotation_of,
    entry_of,
    fork_point_of,
    join_branch,
    redacted,
)


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
    metadata: Mapping[str, str] = NO_METADATA
    predecessor_id: str | None = None
    thoughts: tuple[ThoughtEntry, ...] = ()
    branches: Mapping[str, Branch] = NO_BRANCHES
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
                if (point := fork_point_of(event)) is not None:
                    fork = point
            case (
                ThoughtRecorded()
                | ThoughtRevised()
                | BranchOpened()
                | BranchExtended()
                | ThoughtGenerated()
                | ThoughtCaptured()
            ):
                entry = entry_of(record, event)
                thoughts.append(entry)
                if entry.kind in BRANCH_KINDS:
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
            case ActionTaken():
                pass  # an action is shown beside the line of reasoning, never part of it
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
    "SessionState",
    "empty",
    "fork_base",
    "grafted",
    "replay",
    "trim",
]
