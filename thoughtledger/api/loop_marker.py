"""Loop marks: the repeats of the thoughts the ledger appends, stored with them.

Design. The SQL views and ``stats`` count loops from marks stored beside the log (``tl_loops``,
see :mod:`thoughtledger.ledger.store.loop_marks`), because the comparison that finds a repeat
(word shingles, :mod:`thoughtledger.projections.loops`) cannot be made in SQL. Two ways were open:
marks written with the append that records the thought, or a derived table caught up before each
read. A catch-up cannot run before an analyst's own SQL query, so the views would be stale until
something ran it; marks are therefore written at append time, in the append's own transaction
(option (a)), and a catch-up exists only for what an append cannot know:

* **Append** (:meth:`LoopMarker.append`, the one call the recording path makes): the ledger
  holds, per recent session, the fold's window (a :class:`LoopFinder` at the session's version);
  the new thoughts are folded through it (one normalisation and a few index lookups each) and
  their repeats go to :meth:`.EventStore.append` as ``loop_marks``. The window is built from the
  held head (the latest thoughts) when the ledger has none at that version, and from the whole
  session only when the head holds fewer than :data:`LOOP_WINDOW` comparable thoughts of its own.
* **Behind**: an append that carries no marks (a redaction: it changes the window of every later
  thought), an import, schema step 10 (every session of an older ledger), or a write by another
  program through the store alone, lists the session in ``tl_loops_behind``, in its own
  transaction. :meth:`LoopMarker.refresh` folds each such session from the log and writes its
  marks afresh (if it has not moved meanwhile), taking it off the list; it runs when a ledger is
  opened for writing (so an upgraded ledger is filled then), after every redaction and import.
  Until then ``tl_session_loops.marks_current`` is false for it and ``stats`` folds it itself:
  the counts are never silently stale.

A session's marks are its own thoughts' repeats of its own earlier thoughts, in version order
(what ``stats`` counted before the marks were stored): a fork's inherited thoughts are its
source's.
"""

from collections import OrderedDict
from collections.abc import Sequence
from typing import cast, get_args

from thoughtledger.api.caches import Held
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import LedgerEvent, ThoughtEvent, ThoughtRedacted
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.loop_marks import LoopMark
from thoughtledger.projections.entries import ThoughtEntry
from thoughtledger.projections.loops import LOOP_WINDOW, LoopFinder, Repeat, find_repeats
from thoughtledger.projections.state import SessionState

_THOUGHTS = frozenset(get_args(ThoughtEvent))
"""The classes of the events that carry a thought (looked up by exact type: the append path)."""

_ATTEMPTS = 3
"""Times a session that keeps moving is folded again before it is left behind (for later)."""


def own_thoughts(state: SessionState) -> list[ThoughtEntry]:
    """The session's own thoughts (a fork's inherited ones left out), in version order."""
    return [entry for entry in state.thoughts if entry.source is None]


def as_marks(repeats: Sequence[Repeat]) -> list[LoopMark]:
    """The stored form of repeats (no text, no thought numbers: versions address them)."""
    return [LoopMark(r.version, r.repeats_version, r.similarity) for r in repeats]


class LoopMarker:
    """Finds the marks of appended thoughts, and marks afresh the sessions found behind.

    Args:
        store: The log, which keeps the marks.
        held: The sessions the ledger holds (a window is built from a held head).
        size: Sessions whose window is kept between appends (least recently used go first).
    """

    def __init__(self, store: LedgerStore, held: Held, *, size: int = 1024) -> None:
        self._store = store
        self._held = held
        self._size = size
        self._windows: OrderedDict[str, tuple[int, LoopFinder]] = OrderedDict()

    async def append(self, state: SessionState, events: list[LedgerEvent]) -> list[RecordedEvent]:
        """Append ``events`` after ``state`` with the loop marks of their thoughts.

        Raises:
            ConcurrencyError: The session moved past ``state``.
            StoreError: The store failed.
        """
        session_id = state.session_id
        # Taken out while in use: a failed append leaves no window at a version never stored.
        kept = self._windows.pop(session_id, None)
        finder = kept[1] if kept is not None and kept[0] == state.version else None
        found: list[LoopMark] = []
        redacts = False
        version = state.version
        for event in events:
            version += 1
            kind = type(event)
            if kind in _THOUGHTS:
                thought = cast(ThoughtEvent, event)
                if finder is None:
                    finder = await self._window(state)
                repeat = finder.see(
                    version, thought.thought_number, thought.thought, redacted=thought.redacted
                )
                if repeat is not None:
                    found.append(LoopMark(version, repeat.repeats_version, repeat.similarity))
            elif kind is ThoughtRedacted:
                redacts, finder = True, None
                break
        # None: a redaction changes the windows after it; the session is marked afresh.
        marks = None if redacts else found
        recorded = await self._store.append(
            session_id, events, expected_version=state.version, loop_marks=marks
        )
        if finder is not None and recorded:
            self._windows[session_id] = (recorded[-1].version, finder)
            while len(self._windows) > self._size:
                self._windows.popitem(last=False)
        return recorded

    async def _window(self, state: SessionState) -> LoopFinder:
        """The fold's window after ``state`` (its latest comparable thoughts of its own)."""
        own = [entry for entry in own_thoughts(state) if not entry.redacted]
        if len(own) < LOOP_WINDOW and not state.complete:
            # The head was trimmed below a window's worth (redacted or inherited thoughts):
            # read the whole session, up to this version.
            full = await self._held.complete(state.session_id)
            own = [
                entry
                for entry in own_thoughts(full)
                if not entry.redacted and entry.version <= state.version
            ]
        finder = LoopFinder()
        for entry in own[-LOOP_WINDOW:]:
            finder.see(entry.version, entry.thought_number, entry.thought, redacted=False)
        return finder

    async def refresh(self, *, page: int = 1000) -> int:
        """Mark afresh every session listed as behind on its marks; how many were marked.

        A session that moves while it is folded is folded again (a few times), else left behind
        for a later refresh.

        Raises:
            StoreError: The store failed (or is read-only).
        """
        marked, after = 0, ""
        while behind := await self._store.loops_behind(after=after, limit=page):
            after = behind[-1]
            for session_id in behind:
                marked += await self.mark_afresh(session_id)
            if len(behind) < page:
                break
        return marked

    async def mark_afresh(self, session_id: str) -> bool:
        """Fold ``session_id`` from the log and store its marks; whether they were written.

        Raises:
            StoreError: The store failed (or is read-only).
        """
        for _attempt in range(_ATTEMPTS):
            state = await self._held.complete(session_id)
            marks = as_marks(find_repeats(own_thoughts(state)))
            if await self._store.mark_loops(session_id, state.version, marks):
                return True
        return False


__all__ = ["LoopMarker", "as_marks", "own_thoughts"]
