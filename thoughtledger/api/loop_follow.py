"""Loop marks follow the log: a projection with a position, caught up after appends pause.

Design. The SQL views and ``stats`` count loops from marks stored beside the log (``tl_loops``,
see :mod:`thoughtledger.ledger.store.loop_marks`), because the comparison that finds a repeat
(word shingles, :mod:`thoughtledger.projections.loops`) cannot be made in SQL. The marks are
derived data, and derived data follows the log, as the search index does: no append finds or
writes a mark (an append costs what the log costs), and no opening waits for them.

* **Position.** ``tl_loops_through`` says up to which position of the log every event was taken
  in. :meth:`LoopFollower.catch_up` reads the events after it a page at a time, folds the
  sessions they touch (their new thoughts, through each session's window, kept between pages by
  :class:`~thoughtledger.api.loop_folds.SessionFolds`; a session with a new redaction folded
  whole) and writes their marks and the new position in one transaction, if no other process
  moved the position first (then that one wrote the same marks). The events this ledger
  appended are kept (a few pages' worth) until a page takes them in: a row read back exactly as
  it was appended is folded from its event rather than parsed again, which was a third of the
  follower's cost a captured thought.
* **Schedule.** A catch-up runs :data:`LOOP_DELAY` seconds after the last append through this
  ledger (when appends pause), at once when :data:`LOOP_LAG` events wait (a steady stream never
  leaves the marks far behind), :data:`OPEN_DELAY` seconds after a writable opening (an upgraded
  ledger, an import or another program's appends are taken in then, in the background: the
  ledger answers its first request first), and, for what this ledger appended, when it closes.
  Between pages it lets the event loop's other tasks run.
* **Reads.** A read of a session's marks (:meth:`Loops.marks`), of ``stats``' loop figures, or
  of a session view's marks folds what the position has not taken in itself: every answer is
  the caught-up ledger's. An analyst's own SQL sees ``tl_session_loops.marks_current`` false for
  a session with events after the position.
"""

import asyncio
from collections.abc import Iterable, Sequence

from thoughtledger.api.caches import cyclic_gc_paused
from thoughtledger.api.loop_folds import (
    KeptEvent,
    SessionFolds,
    Step,
    kept_of,
    steps_of_records,
    steps_of_rows,
)
from thoughtledger.ledger.envelope import LogRow, RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError, StoreError
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.ledger.store.loop_marks import FoldedMarks, LoopMark, LoopMarking
from thoughtledger.ledger.store.rows import RowReads

LOOP_LAG = 2048
"""Events appended through this ledger before a catch-up starts without waiting for a pause."""
LOOP_DELAY = 0.05
"""Seconds after the last append before the marks catch up (appends have paused)."""
OPEN_DELAY = 0.5
"""Seconds after a writable opening before the marks look for events they have not taken in."""
PAGE = 1000
"""Events one catch-up transaction takes in."""
CLOSE_PAGES = 4
"""Pages a closing ledger folds at most (what it appended itself, usually one page)."""
_END_WAIT = 5.0
"""Seconds :meth:`Loops.catch_up` waits for transactions in flight that hold back stored events."""
_YIELD_EVERY = 200
"""Events folded between two chances for the event loop's other tasks to run."""
_HELD = 2 * LOOP_LAG
"""Events appended through this ledger that the follower keeps until it takes them in."""


class LoopFollower:
    """Keeps a writable ledger's loop marks up to the log's end (a part of :class:`Loops`).

    Args:
        store: The log.
        marks: The stored marks and their position.
        rows: The log's rows, read in pages after that position.
        folds: The sessions' folds, shared with the readers.
    """

    def __init__(
        self, store: EventStore, marks: LoopMarking, rows: RowReads, folds: SessionFolds
    ) -> None:
        self._store = store
        self._marks = marks
        self._rows = rows
        self._folds = folds
        self._waiting = 0
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._armed = 0
        self._one = asyncio.Lock()
        self._closing = False
        # What this ledger appended, by position, until a page takes it in: a row read back
        # as it was appended is folded from its event rather than parsed again.
        self._held: dict[int, KeptEvent] = {}

    def appended(self, records: Sequence[RecordedEvent]) -> None:
        """Hear of an append through the ledger (an observer): keep its events, plan a catch-up."""
        held = self._held
        for record in records:
            held[record.position] = kept_of(record)
        while len(held) > _HELD:  # left behind (a failing store): the log has them
            del held[next(iter(held))]
        self.note(len(records))

    def note(self, count: int) -> None:
        """Hear of ``count`` events written (an append, an import): plan a catch-up.

        A few attribute updates: the timer is armed once, and when it fires after appends that
        came meanwhile it waits again (appends have not paused yet) rather than being moved at
        every append.
        """
        self._waiting += max(count, 1)
        if self._waiting >= LOOP_LAG and self._task is None and not self._closing:
            if self._timer is not None:
                self._timer.cancel()
            self._start()
        elif self._timer is None:
            self._plan(LOOP_DELAY)

    def opened(self) -> None:
        """Plan the first catch-up, after the ledger has had time to answer its first request."""
        self._plan(OPEN_DELAY)

    def _plan(self, delay: float) -> None:
        if self._closing or self._task is not None or self._timer is not None:
            return  # a running catch-up reads on to the log's end, these events included
        self._armed = self._waiting
        self._timer = asyncio.get_running_loop().call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self._waiting != self._armed and self._waiting < LOOP_LAG:
            self._plan(LOOP_DELAY)  # appends came meanwhile: wait for them to pause
            return
        self._start()

    def _start(self) -> None:
        self._timer = None
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            self._waiting = 0
            while not self._closing and await self.page() == PAGE:
                pass
        except StoreError as exc:
            # Left behind; every read folds what it lacks, and the next append plans again.
            if not self._store.closed:  # a store closed under it: nothing is lost, say nothing
                _log("loop_marks_behind", error=str(exc))
        finally:
            self._task = None
        if self._waiting and not self._closing:
            self._plan(LOOP_DELAY)  # appends that came meanwhile

    async def catch_up(self, *, events: int | None = None) -> int:
        """Take in the events after the position (at most ``events`` of them); how many.

        Raises:
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed (or is read-only).
        """
        taken = 0
        while events is None or taken < events:
            wanted = PAGE if events is None else min(PAGE, events - taken)
            count = await self.page(wanted)
            taken += count
            if count < wanted:
                break
        return taken

    async def page(self, limit: int = PAGE) -> int:
        """Take in one page of (at most ``limit``) events after the position; how many.

        Raises:
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed (or is read-only).
        """
        async with self._one:
            through = await self._marks.loops_through()
            # The fold's columns only: a mark needs no event's id or hashes.
            rows = await self._rows.read_all_rows(after_position=through, limit=limit)
            if not rows:
                return 0
            held = self._held
            with cyclic_gc_paused():  # a bulk fold: see Capturing.record
                steps = steps_of_rows(rows, held)
                for row in rows:
                    held.pop(row.position, None)
                folded = await self._fold(rows, steps)
            if await self._marks.fold_loop_marks(through, rows[-1].position, folded):
                for item, last in zip(folded, _last_versions(rows), strict=True):
                    self._folds.settled(item.session_id, last)
            return len(rows)

    async def _fold(self, rows: Sequence[LogRow], steps: Sequence[Step]) -> list[FoldedMarks]:
        by_session: dict[str, list[Step]] = {}
        for row, step in zip(rows, steps, strict=True):
            by_session.setdefault(row.session_id, []).append(step)
        folded, since = [], 0
        for session_id, session_steps in by_session.items():
            first, last = session_steps[0].version, session_steps[-1].version
            folded.append(await self._folds.marks_after(session_id, first - 1, last, session_steps))
            since += len(session_steps)
            if since >= _YIELD_EVERY:
                since = 0
                await asyncio.sleep(0)  # the event loop's other tasks (a request) run here
        return folded

    async def aclose(self) -> None:
        """Stop following; fold what this ledger appended (a few pages at most) first.

        A failure is logged, never raised: the marks stay behind, and the next opening or read
        takes them in.
        """
        self._closing = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None:
            await self._task
        if self._waiting:
            self._waiting = 0
            try:
                await self.catch_up(events=CLOSE_PAGES * PAGE)
            except StoreError as exc:
                _log("loop_marks_behind", error=str(exc))


def _last_versions(rows: Iterable[LogRow]) -> list[int]:
    """Each session's last version among ``rows``, in the order sessions first appear."""
    last: dict[str, int] = {}
    for row in rows:
        last[row.session_id] = row.version
    return list(last.values())


class Loops:
    """A ledger's loop marks: ``ledger.loops.marks(session_id)``, always complete.

    Args:
        store: The log.
        marks: The stored marks and their position.
        rows: The log's rows, read in pages where the marks follow it.
        follow: Keep the marks following the log in the background; else they move only on
            :meth:`catch_up`, and readers fold what they lack. A read-only store never writes
            them.
    """

    def __init__(
        self, store: EventStore, marks: LoopMarking, rows: RowReads, *, follow: bool = True
    ) -> None:
        self._store = store
        self._marks = marks
        self._rows = rows
        self._folds = SessionFolds(store)
        self._follower = None if store.read_only else LoopFollower(store, marks, rows, self._folds)
        self._follow = follow and self._follower is not None

    async def behind(self, *, cap: int = 1000) -> int:
        """How many events of the log the stored marks have not taken in (at most ``cap``).

        Reads are answered whole either way (they fold what is missing); this says how much a
        read folds, and what the next writable opening takes in.

        Raises:
            InvalidInputError: ``cap`` is below 1.
            StoreError: The store failed.
        """
        if isinstance(cap, bool) or cap < 1:
            raise InvalidInputError(f"cap must be at least 1, got {cap!r}")
        through = await self._marks.loops_through()
        return len(await self._rows.read_all_rows(after_position=through, limit=cap))

    async def marks(
        self, session_id: str, *, after_version: int = 0, to_version: int | None = None
    ) -> list[LoopMark]:
        """The session's loop marks (its own thoughts that repeat an earlier one), in order.

        The stored marks, and, for the events the marks' position has not taken in yet, the
        fold's (the answer a caught-up ledger gives). A reader following a session from a
        version on (the browser view's live feed) asks for the marks after it only: what it
        costs is bounded by the events after ``after_version`` (and the session's stored
        marks), never the whole session.

        Args:
            session_id: The session.
            after_version: Only the marks of versions after this one (0: from the start).
            to_version: Only the marks of versions up to this one (``None``: all).

        Raises:
            InvalidInputError: A malformed session id.
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed.
        """
        from thoughtledger.ledger.ids import check_id

        check_id(session_id)
        head = await self._store.stream_head(session_id)
        if head is None:
            return []
        upper = head.version if to_version is None else min(to_version, head.version)
        if after_version >= upper:
            return []
        through = await self._marks.loops_through()
        if after_version and upper - after_version <= PAGE:
            # A follower's few new events: folded through the window before them, read from
            # the log backwards (the same marks the stored ones are, whatever their position),
            # so neither the session nor its stored marks are read whole.
            folded = await self._folds.marks_after(session_id, after_version, upper)
            return [mark for mark in folded.marks if mark.version > after_version]
        taken = await self._store.version_at(session_id, through) if through else 0
        if taken >= upper:
            stored = await self._marks.loop_marks(session_id)
            return [mark for mark in stored if after_version < mark.version <= upper]
        # Folded from where the caller stands when that is past the stored marks: the fold's
        # window is built from the log backwards, so it reads only what follows it.
        folded = await self._folds.marks_after(session_id, max(taken, after_version), upper)
        found = [mark for mark in folded.marks if mark.version > after_version]
        if folded.after_version == 0 or after_version >= taken:
            return found
        stored = await self._marks.loop_marks(session_id)
        return [mark for mark in stored if after_version < mark.version <= taken] + found

    async def thought_number(self, session_id: str, version: int) -> int | None:
        """The number of the thought at ``version`` of the session (``None``: not a thought).

        One event read: what a live feed needs to name the thought a new one repeats.

        Raises:
            InvalidInputError: A malformed session id.
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed.
        """
        from thoughtledger.ledger.ids import check_id

        check_id(session_id)
        if version < 1:
            return None
        records = await self._store.read_stream(
            session_id, after_version=version - 1, to_version=version
        )
        steps = steps_of_records(records)
        return steps[0].number if steps and steps[0].text is not None else None

    async def marks_of(self, session_ids: Iterable[str]) -> dict[str, list[LoopMark]]:
        """:meth:`marks` of several sessions: only those with marks or not taken in are read.

        Raises:
            InvalidInputError: A malformed session id.
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed.
        """
        counts = await self._marks.loop_counts()
        found: dict[str, list[LoopMark]] = {}
        for session_id in session_ids:
            if counts is None or session_id in counts.behind or counts.repeats.get(session_id):
                marks = await self.marks(session_id)
                if marks:
                    found[session_id] = marks
        return found

    async def catch_up(self, *, events: int | None = None) -> int:
        """Bring the stored marks up to the log's end now; how many events were taken in.

        Args:
            events: Take in at most this many (``None``: up to the log's end).

        Raises:
            InvalidInputError: ``events`` is below 1.
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed, or the ledger does not write its marks (read-only).
        """
        if events is not None and (isinstance(events, bool) or events < 1):
            raise InvalidInputError(f"events must be at least 1, got {events!r}")
        if self._follower is None:
            raise StoreError("this ledger was opened read-only: its loop marks are not written")
        taken = await self._follower.catch_up(events=events)
        if events is None:
            # On PostgreSQL a page of the log stops before a transaction still in flight anywhere
            # on the server: wait (bounded) for those that hold back events already stored.
            deadline = asyncio.get_running_loop().time() + _END_WAIT
            while (counts := await self._marks.loop_counts()) is not None and counts.behind:
                if asyncio.get_running_loop().time() > deadline:
                    break
                await asyncio.sleep(0.01)
                taken += await self._follower.catch_up()
        return taken

    def appended(self, records: list[RecordedEvent]) -> None:
        """Hear of an append through the ledger (its observer)."""
        if self._follow and self._follower is not None:
            self._follower.appended(records)

    async def imported(self) -> None:
        """Hear of an import (its events are taken in after it, in the background)."""
        if self._follow and self._follower is not None:
            self._follower.note(1)

    def opened(self) -> None:
        """Start following, in the background, once the ledger has answered its first request."""
        if self._follow and self._follower is not None:
            self._follower.opened()

    async def aclose(self) -> None:
        """Stop following (see :meth:`LoopFollower.aclose`)."""
        if self._follower is not None:
            await self._follower.aclose()


def _log(event: str, **facts: object) -> None:
    """Log through structlog, imported on first use (a server must not pay for it at start)."""
    import structlog

    structlog.get_logger("thoughtledger.api.loops").warning(event, **facts)


__all__ = [
    "CLOSE_PAGES",
    "LOOP_DELAY",
    "LOOP_LAG",
    "OPEN_DELAY",
    "PAGE",
    "LoopFollower",
    "Loops",
]
