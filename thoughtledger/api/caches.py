"""The facade's memories of sessions, both least recently used first, and what fills them.

:class:`Heads` holds the state each recent session's next thought extends, trimmed so that
recording stays O(1); :class:`Histories` holds whole histories for reading back, within a budget
of thoughts. They only decide what stays (no I/O, no clock); :class:`Held` fills them from the log.
"""

import asyncio
import contextlib
import gc
from collections import OrderedDict
from collections.abc import AsyncIterator, Collection, Iterator

from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import SessionStarted
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.projections.state import SessionState, empty, fork_base, replay, trim

_LOAD_PAGE = 250
"""Events read and folded at a time when a session catches up with the log: a few milliseconds
of work, after which the event loop's other tasks run, so that the first touch of a session of
200,000 thoughts (seconds of decoding and folding) does not stop every other client meanwhile."""


PAUSE = 0.001
"""Seconds a catch-up waits between pages (the store may answer inline, on the loop): long
enough that a call already under way elsewhere finishes its steps before the next page, not just
one of them (``sleep(0)`` would let the next page run between each two of its steps)."""


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

    def forget(self, session_id: str) -> None:
        """Drop the session's history."""
        old = self._states.pop(session_id, None)
        if old is not None:
            self._held -= len(old.thoughts)

    def values(self) -> Iterator[SessionState]:
        """Every history kept, least recently kept first."""
        return iter(self._states.values())

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


class Held:
    """The sessions a ledger holds in memory, caught up with the log on each read.

    Args:
        store: The log.
        heads: The states recording extends.
        histories: The whole histories reads cut.
    """

    def __init__(self, store: EventStore, heads: Heads, histories: Histories) -> None:
        self._store = store
        self.heads = heads
        self._histories = histories

    async def load(self, session_id: str, *, fresh: bool) -> SessionState:
        """The session's head, caught up with the log when ``fresh`` (or not held).

        Raises:
            StoreError: The store failed.
        """
        cached = self.heads.get(session_id)
        if cached is not None and not fresh:
            return cached
        if cached is not None:
            state, more = cached, True
        else:
            state, more = await self._first_page(session_id)
        # In pages, trimmed between them: a head needs only the latest thoughts, so catching
        # up with a session of a million thoughts holds one page at a time, not the million.
        with cyclic_gc_paused():
            async for records in self._pages(session_id, state.version) if more else _none():
                state = self.heads.bounded(replay(records, state))
        if state.version:
            self.heads.remember(state)
        return state

    async def complete(self, session_id: str) -> SessionState:
        """The session's current state holding every thought.

        Whole histories are kept apart from the heads that recording uses, and caught up with
        the log on each read.

        Raises:
            StoreError: The store failed.
        """
        head = await self.load(session_id, fresh=True)
        if head.complete:
            self._histories.keep(head)
            return head
        full = self._histories.get(session_id)
        if full is None or full.version > head.version:
            full = await self.start(session_id)
        with cyclic_gc_paused():
            async for records in self._pages(session_id, full.version):
                full = replay(records, full)
        self._histories.keep(full)
        return full

    def forget_inheritors(self, session_id: str) -> None:
        """Drop every held fork that inherits thoughts of ``session_id`` (read afresh next)."""
        for states, forget in (
            (self.heads.values(), self.heads.forget),
            (self._histories.values(), self._histories.forget),
        ):
            stale = [
                state.session_id
                for state in states
                if state.fork is not None
                and any(entry.source == session_id for entry in state.thoughts)
            ]
            for fork in stale:
                forget(fork)

    async def _first_page(self, session_id: str) -> tuple[SessionState, bool]:
        """The session's first page folded, and whether more pages may follow.

        One read for a session not held, fork or not; a fork's page is folded onto its source's
        state at the fork point.

        Raises:
            StoreError: The store failed.
        """
        records = await self._store.read_stream(session_id, limit=_LOAD_PAGE)
        origin = fork_origin(records[0]) if records else None
        base = empty(session_id)
        if origin is not None and origin[0] != session_id:
            base = fork_base(
                session_id, await self._as_of(origin[0], origin[1], frozenset({session_id}))
            )
        with cyclic_gc_paused():
            state = self.heads.bounded(replay(records, base))
        return state, len(records) == _LOAD_PAGE

    async def start(self, session_id: str) -> SessionState:
        """The state before the session's first event: empty, or for a fork its source's.

        A fork's first event names its source and version; the source's thoughts up to there
        are read from the source itself (nothing was copied), through any chain of forks.

        Raises:
            StoreError: The store failed.
        """
        return await self._start(session_id, frozenset())

    async def _start(self, session_id: str, seen: frozenset[str]) -> SessionState:
        first = await self._store.read_stream(session_id, to_version=1)
        origin = fork_origin(first[0]) if first else None
        # A forged log could name a cycle of forks: a session seen already starts empty.
        if origin is None or origin[0] in seen:
            return empty(session_id)
        source, version = origin
        return fork_base(session_id, await self._as_of(source, version, seen | {session_id}))

    async def as_of(self, session_id: str, version: int) -> SessionState:
        """The session's complete state after its first ``version`` events (a fork's included).

        Raises:
            StoreError: The store failed.
        """
        return await self._as_of(session_id, version, frozenset())

    async def _as_of(self, session_id: str, version: int, seen: frozenset[str]) -> SessionState:
        state = await self._start(session_id, seen)
        with cyclic_gc_paused():
            async for records in self._pages(session_id, 0, to_version=version):
                state = replay(records, state)
        return state

    async def _pages(
        self, session_id: str, after_version: int, *, to_version: int | None = None
    ) -> AsyncIterator[list[RecordedEvent]]:
        """The session's events after ``after_version``, a page at a time, other tasks between.

        Raises:
            StoreError: The store failed.
        """
        while records := await self._store.read_stream(
            session_id, after_version=after_version, to_version=to_version, limit=_LOAD_PAGE
        ):
            yield records
            if len(records) < _LOAD_PAGE:
                return
            after_version = records[-1].version
            await asyncio.sleep(PAUSE)

    def known_branches(self, session_id: str, version: int) -> Collection[str] | None:
        """The session's branch ids at ``version`` when known without reading, else ``None``."""
        # Every branch id stays in a held state, trimmed or not; only a state at the session's
        # current version answers (one behind could miss a branch another writer opened).
        held = self.heads.get(session_id)
        return held.branches.keys() if held is not None and held.version == version else None


def fork_origin(record: RecordedEvent) -> tuple[str, int] | None:
    """The source and version a session's first event names when it is a fork, else ``None``."""
    event = record.event
    if isinstance(event, SessionStarted) and event.fork_of is not None:
        assert event.fork_version is not None  # noqa: S101  # the model requires all three
        return event.fork_of, event.fork_version
    return None


async def _none() -> AsyncIterator[list[RecordedEvent]]:
    """No pages (the first one was the last)."""
    return
    yield  # an async generator that yields nothing


class _GcPause:
    """Pauses the cyclic garbage collector while any bulk fold runs (folds may overlap)."""

    def __init__(self) -> None:
        self.active = 0
        self.resume = False

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        """Pause collection for the duration; the last overlapping fold to end restores it.

        A bulk fold builds millions of objects, none of which can form a cycle, yet every full
        collection walks them all: rebuilding 1M events ran 19 full collections that took 4.9 s
        of its 11.8 s. Reference counting still frees everything; cycles made elsewhere
        meanwhile are collected once the pause ends.
        """
        if self.active == 0:
            self.resume = gc.isenabled()
            gc.disable()
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1
            if self.active == 0 and self.resume:
                gc.enable()


cyclic_gc_paused = _GcPause()
"""Use as ``with cyclic_gc_paused():`` around a bulk fold."""


__all__ = ["PAUSE", "Heads", "Held", "Histories", "cyclic_gc_paused", "fork_origin"]
