"""The facade's two memories of sessions, both least recently used first; no I/O, no clock.

:class:`Heads` holds the state each recent session's next thought extends, trimmed so that
recording stays O(1); :class:`Histories` holds whole histories for reading back, within a budget
of thoughts. The facade fills both from the log; they only decide what stays.
"""

from collections import OrderedDict
from collections.abc import Iterator

from thoughtledger.projections.state import SessionState, trim


class Heads:
    """The states recording extends: one per session, up to ``size`` sessions.

    Args:
        size: How many sessions to keep (least recently used go first).
        hold: Thoughts each session keeps: between this many and twice as many, so that
            trimming happens once per ``hold`` thoughts rather than on every one.
    """

    def __init__(self, size: int, hold: int) -> None:
        self._states: OrderedDict[str, SessionState] = OrderedDict()
        self._size = size
        self._hold = hold

    def get(self, session_id: str) -> SessionState | None:
        """The session's remembered state, if any (it becomes the most recently used)."""
        state = self._states.get(session_id)
        if state is not None:
            self._states.move_to_end(session_id)
        return state

    def bounded(self, state: SessionState) -> SessionState:
        """``state`` trimmed to its latest thoughts if it holds more than a head keeps."""
        return trim(state, self._hold) if len(state.thoughts) > 2 * self._hold else state

    def remember(self, state: SessionState) -> None:
        """Keep ``state`` (trimmed to its latest thoughts) as its session's head."""
        state = self.bounded(state)
        self._states[state.session_id] = state
        self._states.move_to_end(state.session_id)
        while len(self._states) > self._size:
            self._states.popitem(last=False)

    def forget(self, session_id: str) -> None:
        """Drop the session's head (another writer moved it)."""
        self._states.pop(session_id, None)

    def values(self) -> Iterator[SessionState]:
        """Every state held, least recently used first."""
        return iter(self._states.values())


class Histories:
    """Whole histories for reads, within a budget of thoughts across sessions.

    Args:
        budget: Thoughts kept in all; a history longer than this is never kept.
    """

    def __init__(self, budget: int) -> None:
        self._states: OrderedDict[str, SessionState] = OrderedDict()
        self._budget = budget
        self._held = 0

    def get(self, session_id: str) -> SessionState | None:
        """The session's kept history, if any."""
        return self._states.get(session_id)

    def keep(self, state: SessionState) -> None:
        """Keep ``state`` as its session's history, dropping the least recently kept to fit."""
        old = self._states.pop(state.session_id, None)
        if old is not None:
            self._held -= len(old.thoughts)
        if len(state.thoughts) > self._budget:
            return  # too long to keep: folded from the log on each read instead
        self._states[state.session_id] = state
        self._held += len(state.thoughts)
        while self._held > self._budget:
            _evicted_id, evicted = self._states.popitem(last=False)
            self._held -= len(evicted.thoughts)


__all__ = ["Heads", "Histories"]
