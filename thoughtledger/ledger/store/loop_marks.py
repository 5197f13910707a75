"""Loop marks kept beside the log: which thoughts repeat an earlier one (a store capability).

Finding a repeat compares texts (word shingles, see :mod:`thoughtledger.projections.loops`), which
SQL cannot do, and this layer knows nothing of projections. So the facade finds the repeats of the
thoughts it appends, with the projection, and hands them to :meth:`.EventStore.append` as
``loop_marks``; the store writes them in the same transaction as the events. Every store keeps
the same two facts:

* ``tl_loops``: one row per repeat, ``(session_id, version, repeats_version, similarity)``. A
  mark holds no text, so a redaction strips nothing from it (the marks it changes are computed
  again, below).
* ``tl_loops_behind``: the sessions whose marks may not cover every thought. An append whose
  marks were not given (``loop_marks=None``: a write by a caller that does not find repeats, a
  redaction, which changes the windows of the thoughts after it) and an import put the session
  here, in their own transaction; schema step 10 puts every session of an older ledger here.
  :meth:`LoopMarking.mark_loops` writes a session's marks afresh and takes it out.

So marks are never silently stale: a session is either current (its marks are those of the
projection over its thoughts) or listed as behind, and readers (the ``tl_session_loops`` view's
``marks_current``, ``thoughtledger stats``) can tell. An append with marks onto a session that
is behind leaves it behind (its earlier marks are still missing) and costs nothing more: the
common append writes one row per repeat found, and nothing at all when there is none.

A session's marks are those of its own thoughts, in version order, against its own earlier
thoughts (a fork's inherited thoughts are its source's, marked there): what ``stats`` counts.
"""

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import THOUGHT_TYPES, LedgerEvent
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
class LoopCounts:
    """Stored loop marks counted over the sessions a :class:`StatsFilter` selects.

    Attributes:
        sessions: Sessions selected.
        repeats: Stored repeats per selected session that has any.
        behind: Selected sessions whose marks may not cover every thought (count them another
            way, by folding their thoughts).
    """

    sessions: int
    repeats: dict[str, int]
    behind: tuple[str, ...]


def check_marks(
    marks: Sequence[LoopMark], events: Sequence[LedgerEvent], expected_version: int
) -> list[LoopMark]:
    """Validate the loop marks given with an append of ``events`` after ``expected_version``.

    Returns:
        The marks, as a list of :class:`LoopMark`.

    Raises:
        InvalidInputError: A mark is not of a thought of this append, not in version order,
            names no earlier version, or has a similarity outside ``[0, 1]``.
    """
    checked: list[LoopMark] = []
    last = expected_version
    for mark in marks:
        if not isinstance(mark, LoopMark):
            raise InvalidInputError(f"not a loop mark: {type(mark).__name__}")
        version, earlier, similarity = mark
        valid = (
            isinstance(version, int)
            and isinstance(earlier, int)
            and isinstance(similarity, float)
            and last < version <= expected_version + len(events)
            and 1 <= earlier < version
            and 0.0 <= similarity <= 1.0
        )
        if not valid or events[version - expected_version - 1].type not in THOUGHT_TYPES:
            raise InvalidInputError(
                f"a loop mark must name a thought of the append, in order, an earlier version "
                f"and a similarity in [0, 1]; got {mark!r}"
            )
        checked.append(mark)
        last = version
    return checked


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
    async def loops_behind(self, *, after: str = "", limit: int = 1000) -> list[str]:
        """Return ids of sessions whose marks are behind, in id order, after ``after``.

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The backend failed, or (opened read-only) the ledger predates marks.
        """

    @abstractmethod
    async def mark_loops(self, session_id: str, version: int, marks: Sequence[LoopMark]) -> bool:
        """Replace the marks of ``session_id`` by ``marks``, found over ``version`` events.

        Written only if the session is still at ``version``; it is then no longer behind.

        Returns:
            Whether they were written (``False``: the session moved on; nothing changed).

        Raises:
            InvalidInputError: A malformed session id or mark.
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


def check_mark_rows(session_id: str, version: int, marks: Sequence[LoopMark]) -> list[LoopMark]:
    """Validate what :meth:`LoopMarking.mark_loops` is given.

    Raises:
        InvalidInputError: A bad version, or marks out of order or out of range.
    """
    from thoughtledger.ledger.ids import check_id

    check_id(session_id)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise InvalidInputError(f"a session version is an integer >= 0, got {version!r}")
    checked: list[LoopMark] = []
    last = 0
    for mark in marks:
        if not isinstance(mark, LoopMark):
            raise InvalidInputError(f"not a loop mark: {type(mark).__name__}")
        if not (last < mark.version <= version and 1 <= mark.repeats_version < mark.version):
            raise InvalidInputError(f"loop marks out of order or range: {mark!r}")
        if not isinstance(mark.similarity, float) or not 0.0 <= mark.similarity <= 1.0:
            raise InvalidInputError(f"a similarity is a float in [0, 1], got {mark!r}")
        checked.append(mark)
        last = mark.version
    return checked


class HeldLoopMarks:
    """Loop marks held in memory: the in-memory store's part (the SQL backends keep tables)."""

    def __init__(self) -> None:
        self._marks: dict[str, dict[int, LoopMark]] = {}
        self.behind: set[str] = set()

    def appended(self, session_id: str, marks: Sequence[LoopMark] | None) -> None:
        """Take an append's marks (``None``: the session is now behind)."""
        if marks is None:
            self.behind.add(session_id)
        elif marks:
            self._marks.setdefault(session_id, {}).update((mark.version, mark) for mark in marks)

    def marks(self, session_id: str) -> list[LoopMark]:
        """The session's marks in version order."""
        held = self._marks.get(session_id, {})
        return [held[version] for version in sorted(held)]

    def replace(self, session_id: str, marks: Sequence[LoopMark]) -> None:
        """Make ``marks`` the session's marks; it is no longer behind."""
        self._marks[session_id] = {mark.version: mark for mark in marks}
        if not marks:
            del self._marks[session_id]
        self.behind.discard(session_id)

    def counts(self, selected: Sequence[str]) -> LoopCounts:
        """The marks counted over the ``selected`` sessions."""
        repeats = {sid: len(self._marks[sid]) for sid in selected if self._marks.get(sid)}
        behind = tuple(sorted(sid for sid in selected if sid in self.behind))
        return LoopCounts(len(selected), repeats, behind)


__all__ = [
    "HeldLoopMarks",
    "LoopCounts",
    "LoopMark",
    "LoopMarking",
    "check_mark_rows",
    "check_marks",
]
