"""Loops over a whole ledger: sessions with loops and repeats per session (``stats``).

The figures (:class:`LoopStats`), from the loop marks the store keeps (``ledger.stats.loops()``)
or from the fold of :mod:`thoughtledger.projections.loops`, one window per session, over a log
read in position order (:class:`LoopCounter`: ``ledger.stats.loops_folded()``, and the sessions
whose stored marks are behind).
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from thoughtledger.projections.loops import LoopFinder


@dataclass(frozen=True, slots=True)
class LoopStats:
    """Loops over a ledger's sessions (``thoughtledger stats``).

    Attributes:
        sessions: Sessions counted.
        sessions_with_loops: Sessions with at least one repeat.
        repeats: Repeats over every session counted.
        repeats_per_session: By session with loops, most repeats first (ties by id).
    """

    sessions: int
    sessions_with_loops: int
    repeats: int
    repeats_per_session: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, sessions: int, repeats: Mapping[str, int]) -> "LoopStats":
        """The figures from the sessions counted and the repeats of those with any."""
        ranked = sorted(
            ((sid, count) for sid, count in repeats.items() if count),
            key=lambda item: (-item[1], item[0]),
        )
        return cls(sessions, len(ranked), sum(count for _, count in ranked), tuple(ranked))

    def as_json(self) -> dict[str, object]:
        """The figures as camelCase JSON."""
        return {
            "sessions": self.sessions,
            "sessionsWithLoops": self.sessions_with_loops,
            "repeats": self.repeats,
            "repeatsPerSession": [
                {"sessionId": session_id, "repeats": count}
                for session_id, count in self.repeats_per_session
            ],
        }


class LoopCounter:
    """Counts repeats over a log read in position order, one :class:`LoopFinder` per session.

    The reader says, at each session's first event, whether the session is counted, then
    passes the thoughts of counted sessions in order.
    """

    def __init__(self) -> None:
        self._finders: dict[str, LoopFinder | None] = {}
        self._repeats: Counter[str] = Counter()

    def knows(self, session_id: str) -> bool:
        """Whether :meth:`start` was called for ``session_id``."""
        return session_id in self._finders

    def counts(self, session_id: str) -> bool:
        """Whether ``session_id`` was started as counted."""
        return self._finders.get(session_id) is not None

    def start(self, session_id: str, *, counted: bool) -> None:
        """Begin a session (at its first event); only a counted one takes thoughts."""
        self._finders[session_id] = LoopFinder() if counted else None

    def thought(
        self, session_id: str, version: int, thought_number: int, text: str, *, redacted: bool
    ) -> None:
        """Fold the next thought of a counted session."""
        finder = self._finders.get(session_id)
        if finder is not None and finder.see(version, thought_number, text, redacted=redacted):
            self._repeats[session_id] += 1

    def result(self) -> LoopStats:
        """The figures over every thought passed."""
        counted = sum(1 for finder in self._finders.values() if finder is not None)
        return LoopStats.of(counted, self._repeats)


__all__ = ["LoopCounter", "LoopStats"]
