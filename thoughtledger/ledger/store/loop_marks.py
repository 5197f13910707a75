"""Loop marks kept beside the log: which thoughts repeat an earlier one (a store capability).

Finding a repeat compares texts (word shingles, see :mod:`thoughtledger.projections.loops`),
which SQL cannot do, and this layer knows nothing of projections. So the marks are a projection
that follows the log, as the search index does: the facade folds the events after a position
and hands the marks it found to :meth:`LoopMarking.fold_loop_marks`, which writes them and moves
the position in one transaction. No append writes a mark, and none waits for one. Every store
keeps the same two facts:

* ``tl_loops``: one row per repeat, ``(session_id, version, repeats_version, similarity)``. A
  mark holds no text, so a redaction strips nothing from it (the redaction event, after the
  position, makes the next fold find the session's marks afresh).
* ``tl_loops_through``: the position up to which every event of the log was taken in. A session
  whose last event lies at or before it is *current*: its marks are the fold's over its
  thoughts. A session with events after it is *behind*: its marks cover the versions before
  them, and a reader folds the rest itself (``tl_session_loops.marks_current`` says which).

The position only moves forward, and only from where the folder read it (a compare-and-set):
two processes folding one ledger never write over each other's marks, and a fold that lost the
race is simply dropped (the winner wrote the same marks, found from the same log). On PostgreSQL
the folder reads pages of the log as every reader does, never past a transaction still in
flight, so the position never passes an event that will still commit before it.

A session's marks are those of its own thoughts, in version order, against its own earlier
thoughts (a fork's inherited thoughts are its source's, marked there): what ``stats`` counts.
"""

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.store.stats_rows import StatsFilter


class LoopMark(NamedTuple):
    """One thought that repeats an earlier thought of its session.

    Attributes:
        version: The repeating thought's version.
        repeats_version: The version of the earlier thought it repeats.
        similarity: Their similarity, in ``[0, 1]`` (1.0: equal once normalised).
    """

    version: int
    repeats_version: int
    similarity: float


@dataclass(frozen=True, slots=True)
class FoldedMarks:
    """What a fold found for one session: its marks after ``after_version``.

    Attributes:
        session_id: The session.
        after_version: The stored marks above this version are replaced by :attr:`marks` (0:
            all of them, as after a redaction, which changes the windows of later thoughts).
        marks: The marks of the thoughts after ``after_version``, in version order.
    """

    session_id: str
    after_version: int
    marks: tuple[LoopMark, ...]


@dataclass(frozen=True, slots=True)
class LoopCounts:
    """Stored loop marks counted over the sessions a :class:`StatsFilter` selects.

    Attributes:
        sessions: Sessions selected.
        repeats: Stored repeats per selected session that has any.
        behind: Selected sessions with events after the marks' position (their stored marks
            may not cover every thought: count them another way, by folding the rest).
    """

    sessions: int
    repeats: dict[str, int]
    behind: tuple[str, ...]


@runtime_checkable
class LoopMarking(Protocol):
    """The loop marks a store keeps beside its log (see the module docstring)."""

    @abstractmethod
    async def loop_marks(self, session_id: str) -> list[LoopMark]:
        """Return the stored marks of ``session_id``, in version order.

        Raises:
            InvalidInputError: A malformed session id.
            StoreError: The backend failed, or (opened read-only) the ledger predates marks.
        """

    @abstractmethod
    async def loops_through(self) -> int:
        """Return the position up to which the marks took in every event (0: none).

        An older ledger opened read-only, which keeps no position, answers 0: every session is
        then folded by its reader.

        Raises:
            StoreError: The backend failed.
        """

    @abstractmethod
    async def fold_loop_marks(self, through: int, to: int, folded: Sequence[FoldedMarks]) -> bool:
        """Write what a fold of the events in ``(through, to]`` found, and move the position.

        In one transaction, and only if the position is still ``through``: each session's
        marks after its ``after_version`` are replaced by the ones given, then the position
        becomes ``to``.

        Returns:
            Whether it was written (``False``: another folder moved the position first; nothing
            changed).

        Raises:
            InvalidInputError: A bad position, session id or mark.
            StoreError: The backend failed or is read-only; nothing changed.
        """

    @abstractmethod
    async def loop_counts(self, where: StatsFilter | None = None) -> LoopCounts | None:
        """Count the stored marks of the sessions ``where`` selects (as ``stats_rows`` does).

        Returns:
            The counts, or ``None`` when the ledger keeps no marks (an older ledger opened
            read-only).

        Raises:
            StoreError: The backend failed.
        """


def check_folded(through: int, to: int, folded: Sequence[FoldedMarks]) -> list[FoldedMarks]:
    """Validate what :meth:`LoopMarking.fold_loop_marks` is given.

    Raises:
        InvalidInputError: A bad position, a malformed session id, or marks out of order or
            range.
    """
    from thoughtledger.ledger.ids import check_id

    for name, value in (("through", through), ("to", to)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidInputError(f"a position is an integer >= 0, got {name}={value!r}")
    if to < through:
        raise InvalidInputError(f"the marks' position only moves forward, not {through} to {to}")
    checked: list[FoldedMarks] = []
    for item in folded:
        if not isinstance(item, FoldedMarks):
            raise InvalidInputError(f"not folded marks: {type(item).__name__}")
        check_id(item.session_id)
        after = item.after_version
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise InvalidInputError(f"a session version is an integer >= 0, got {after!r}")
        last = after
        for mark in item.marks:
            if not isinstance(mark, LoopMark):
                raise InvalidInputError(f"not a loop mark: {type(mark).__name__}")
            if not (last < mark.version and 1 <= mark.repeats_version < mark.version):
                raise InvalidInputError(f"loop marks out of order or range: {mark!r}")
            if not isinstance(mark.similarity, float) or not 0.0 <= mark.similarity <= 1.0:
                raise InvalidInputError(f"a similarity is a float in [0, 1], got {mark!r}")
            last = mark.version
        checked.append(item)
    return checked


class HeldLoopMarks:
    """Loop marks held in memory: the in-memory store's part (the SQL backends keep tables)."""

    def __init__(self) -> None:
        self._marks: dict[str, dict[int, LoopMark]] = {}
        self.through = 0

    def marks(self, session_id: str) -> list[LoopMark]:
        """The session's marks in version order."""
        held = self._marks.get(session_id, {})
        return [held[version] for version in sorted(held)]

    def fold(self, through: int, to: int, folded: Sequence[FoldedMarks]) -> bool:
        """Take a fold's marks and move the position, if it is still ``through``."""
        if self.through != through:
            return False
        for item in folded:
            held = self._marks.get(item.session_id, {})
            kept = {v: mark for v, mark in held.items() if v <= item.after_version}
            kept.update((mark.version, mark) for mark in item.marks)
            if kept:
                self._marks[item.session_id] = kept
            else:
                self._marks.pop(item.session_id, None)
        self.through = to
        return True

    def counts(self, selected: Sequence[str], behind: Iterable[str]) -> LoopCounts:
        """The marks counted over the ``selected`` sessions (``behind``: after the position)."""
        repeats = {sid: len(self._marks[sid]) for sid in selected if self._marks.get(sid)}
        late = set(behind)
        return LoopCounts(len(selected), repeats, tuple(sorted(s for s in selected if s in late)))


__all__ = [
    "FoldedMarks",
    "HeldLoopMarks",
    "LoopCounts",
    "LoopMark",
    "LoopMarking",
    "check_folded",
]
