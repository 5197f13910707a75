"""Time travel without replay: a session as it was at an earlier version or time.

A session's log only grows, and every part of :class:`SessionState` is either fixed by an early
event (start, metadata) or an append-only sequence whose items carry their version (thoughts,
branch members, the retiring event). So the state after the first N events is the current state
cut at N: a binary search and a slice, not a replay. The property tests prove
``as_of(replay(all), n) == replay(first n)`` for generated sessions.

The one thing the cut cannot know is the time of the last event of the prefix when that event is
not a thought (only ``session.started`` and a retiring event are not): both are kept in the state.
"""

from bisect import bisect_right
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType

from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.projections.entries import Branch
from thoughtledger.projections.state import SessionState, empty


def as_of_version(state: SessionState, version: int) -> SessionState:
    """Return ``state`` as it was after its first ``version`` events.

    Args:
        state: A session state folded from the session's first events (any number of them).
        version: How many events to keep; at most ``state.version``.

    Returns:
        The state after exactly ``version`` events.

    Raises:
        ValueError: ``version`` is negative or past ``state.version``.
    """
    if version < 0 or version > state.version:
        raise ValueError(f"version {version} is outside 0..{state.version}")
    if not state.complete:
        raise ValueError("a trimmed state cannot be cut; fold the session's events instead")
    if version == state.version:
        return state
    if version == 0:
        return empty(state.session_id)
    # A fork's inherited thoughts come first and carry their source's versions: they are
    # there from its first event on, and only its own thoughts are cut.
    inherited = inherited_count(state)
    thoughts = state.thoughts[inherited:]
    cut = bisect_right(thoughts, version, key=lambda entry: entry.version)
    kept = state.thoughts[: inherited + cut]
    branches: dict[str, Branch] = {}
    for branch_id, branch in state.branches.items():
        members = tuple(v for v in branch.versions if v <= version)
        if members:
            branches[branch_id] = replace(branch, versions=members)
    started = state.started_version is not None and state.started_version <= version
    ended = state.ended_version is not None and state.ended_version <= version
    updated_at: datetime | None
    if kept and kept[-1].source is None and kept[-1].version == version:
        updated_at = kept[-1].recorded_at
    else:
        # Event ``version`` is not a thought: before any thought it is the start (or, for a
        # session that began without one, the first event shares the start's time).
        updated_at = kept[-1].recorded_at if cut else state.started_at
    return SessionState(
        session_id=state.session_id,
        version=version,
        started_at=state.started_at,
        updated_at=updated_at,
        metadata=state.metadata if started else MappingProxyType({}),
        predecessor_id=state.predecessor_id if started else None,
        thoughts=kept,
        branches=MappingProxyType(branches),
        ended=state.ended if ended else None,
        ended_version=state.ended_version if ended else None,
        started_version=state.started_version if started else None,
        thought_count=len(kept),
        owner=state.owner if started else None,
        fork=state.fork if started else None,
    )


def inherited_count(state: SessionState) -> int:
    """How many of a fork's first thoughts it inherits from its source (0 for any other)."""
    count = 0
    for entry in state.thoughts:
        if entry.source is None:
            break
        count += 1
    return count


def version_at(state: SessionState, moment: datetime) -> int:
    """Return the length of the longest prefix of the session's events recorded by ``moment``.

    A prefix, not a filter: should a clock ever step back, an event is never shown without the
    events before it.

    Args:
        state: The session's current state.
        moment: An aware time.
    """
    if state.started_at is None or moment < state.started_at:
        return 0
    version = state.started_version or 0
    for entry in state.thoughts[inherited_count(state) :]:
        if entry.recorded_at > moment:
            return max(version, entry.version - 1) if version else entry.version - 1
        version = entry.version
    if state.updated_at is not None and state.updated_at <= moment:
        return state.version
    return version


def check_version(session_id: str, version: object, last: int) -> int:
    """Return ``version`` when it is a version of a session whose last is ``last``.

    Raises:
        InvalidInputError: Not an integer, below 1, or past the session's end.
    """
    if isinstance(version, bool) or not isinstance(version, int):
        raise InvalidInputError("as_of_version must be an integer")
    if version < 1:
        raise InvalidInputError("as_of_version must be >= 1")
    if version > last:
        raise InvalidInputError(
            f"session {session_id!r} has {last} events; as_of_version {version} is past its end"
        )
    return version


def check_time(moment: object) -> datetime:
    """Return ``moment`` when it is an aware datetime.

    Raises:
        InvalidInputError: Not a datetime, or one without a time zone.
    """
    if not isinstance(moment, datetime):
        raise InvalidInputError("as_of_time must be a datetime")
    if moment.tzinfo is None:
        raise InvalidInputError("as_of_time must carry a time zone (for example UTC)")
    return moment


__all__ = ["as_of_version", "check_time", "check_version", "inherited_count", "version_at"]
