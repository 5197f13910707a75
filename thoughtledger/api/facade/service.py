"""The async facade: load a session, replay it, decide, append, answer with a view.

No SQL, no MCP, no argument parsing lives here: only the use-cases over the store and projections.
"""

import asyncio
import contextlib
import random
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timedelta
from typing import Any

from thoughtledger.api.facade.bounds import not_found
from thoughtledger.api.facade.caches import Heads, Histories
from thoughtledger.api.facade.figures import Figures
from thoughtledger.api.facade.history import HistoryPage, Paging
from thoughtledger.api.facade.listing import Listing
from thoughtledger.api.facade.lookup import Lookup
from thoughtledger.api.facade.outcome import ThinkOutcome
from thoughtledger.api.facade.proofs import Proofs
from thoughtledger.api.facade.reading import Reading
from thoughtledger.api.facade.redaction import Redaction
from thoughtledger.api.facade.session import Profile, Session
from thoughtledger.api.facade.transfer import Transfer
from thoughtledger.ledger.closing import ClosedOnExit
from thoughtledger.ledger.decide import (
    DEFAULT_MAX_THOUGHT_BYTES,
    Generated,
    ThinkCommand,
    decide_thought,
    parse_command,
    starts_a_run,
)
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import ConcurrencyError
from thoughtledger.ledger.events import LedgerEvent, SessionCleared, SessionExpired
from thoughtledger.ledger.ids import check_id, new_session_id
from thoughtledger.ledger.store.base import EventStore, utc_now
from thoughtledger.projections.state import SessionState, empty, replay

DEFAULT_TTL = timedelta(minutes=30)
"""Idle time after which a session expires (the session pattern's default)."""

_ATTEMPTS = 32
_LOAD_PAGE = 10_000
"""Events read per page when a session's head catches up with the log."""


class Ledger(Lookup, Listing, Reading, Transfer, Figures, Redaction, Paging, Proofs, ClosedOnExit):
    """Sequential thinking over an event store: sessions, thoughts, views and time travel.

    Args:
        store: Where events live; the ledger owns it, closes it in :meth:`aclose`, and is the
            only door to it (look-ups, export and import, statistics: see its methods).
        ttl: Idle time after which a session expires (``None``: never).
        clock: Source of the current time (UTC), for expiry decisions.
        max_thought_bytes: Largest accepted thought, in UTF-8 bytes.
        cache_size: How many session states to keep in memory (least recently used go first).
        hold_thoughts: Thoughts each session keeps in memory for recording the next one (its
            head is all a new thought needs; keeping few makes each thought O(1)). A session
            holds between this many and twice as many, so that trimming happens once per
            ``hold_thoughts`` thoughts rather than on every one.
        cache_thoughts: Thoughts kept in memory, across sessions, for reading whole histories
            back (time travel cuts a cached history instead of replaying the log); a session
            longer than this is folded from the log on each read.
    """

    def __init__(
        self,
        store: EventStore,
        *,
        ttl: timedelta | None = DEFAULT_TTL,
        clock: Callable[[], datetime] = utc_now,
        max_thought_bytes: int = DEFAULT_MAX_THOUGHT_BYTES,
        cache_size: int = 1024,
        hold_thoughts: int = 64,
        cache_thoughts: int = 32_768,
    ) -> None:
        self._store = store
        self._observers: list[Callable[[list[RecordedEvent]], None]] = []
        self.ttl = ttl
        self.max_thought_bytes = max_thought_bytes
        self._clock = clock
        self._cache = Heads(cache_size, hold_thoughts)
        self._full = Histories(cache_thoughts)

    # -- sessions -------------------------------------------------------------------------------

    async def new_session(
        self, *, session_id: str | None = None, metadata: Mapping[str, str] | None = None
    ) -> Session:
        """Return a handle on a new session; it is recorded with its first thought.

        Args:
            session_id: The id to use (the caller owns it); a UUIDv7 is minted when omitted.
            metadata: Facts to record when the session starts (``client``, ``agent``...).

        Raises:
            InvalidInputError: The id is malformed.
        """
        return Session(self, check_id(session_id) if session_id else new_session_id(), metadata)

    def session(self, session_id: str, *, metadata: Mapping[str, str] | None = None) -> Session:
        """Return a handle on ``session_id``, to continue it from any process sharing the ledger.

        Raises:
            InvalidInputError: The id is malformed.
        """
        return Session(self, check_id(session_id), metadata)

    async def think(
        self,
        session_id: str | None,
        arguments: Mapping[str, Any] | ThinkCommand,
        *,
        clear: bool = False,
        metadata: Mapping[str, str] | None = None,
        generated: Generated | None = None,
        owner: str | None = None,
        new_run: bool = False,
    ) -> ThinkOutcome:
        """Record one thought: the use-case behind every tool and the Python API.

        A thought for a session that was cleared or has expired starts a fresh session under a new
        id (recorded with its predecessor); ``clear=True`` retires the given session first.

        Args:
            session_id: The session to continue; ``None`` starts a new one.
            arguments: The thought's fields (snake_case) or a validated command.
            clear: Retire ``session_id`` and start afresh under a new id.
            metadata: Facts to record if a session starts here.
            generated: When a model wrote the thought: the guidance and the generation, recorded
                with it in one ``thought.generated`` event (see
                :mod:`thoughtledger.api.llm.external`).
            owner: The principal recording (see :mod:`thoughtledger.api.facade.access`):
                recorded as the owner of a session that starts here; a session another
                principal (or nobody) owns is answered as not found. ``None``: the ledger's own
                user, who may write anywhere.
            new_run: A plain thought numbered 1 on a session that already holds thoughts starts
                a new session that records the one it follows (one session per run of an
                agent), instead of joining the old one.

        Returns:
            The outcome, with the session id the thought landed in.

        Raises:
            InvalidThoughtError: The arguments break a rule; nothing was appended.
            InvalidInputError: The session id is malformed; nothing was appended.
            SessionNotFoundError: ``owner`` does not own the session; nothing was appended.
            StoreError: The store failed; nothing was appended.
        """
        command = (
            arguments
            if isinstance(arguments, ThinkCommand)
            else parse_command(arguments, max_thought_bytes=self.max_thought_bytes)
        )
        current = check_id(session_id) if session_id is not None else new_session_id()
        recorded: list[RecordedEvent] = []
        replaced: str | None = None
        fresh = False
        conflict: ConcurrencyError | None = None
        for attempt in range(_ATTEMPTS):
            state = await self._load(current, fresh=fresh)
            if owner is not None and state.version and state.owner != owner:
                raise not_found(current)
            retire = self._retirement(state, clear=clear and replaced is None)
            try:
                if retire is not None:
                    recorded += await self._append(state, [retire])
                if state.version and (
                    retire is not None
                    or state.ended is not None
                    or (new_run and state.thought_count and starts_a_run(command))
                ):
                    replaced, current = current, new_session_id()
                    state = empty(current)
                events = decide_thought(
                    command,
                    version=state.version,
                    known_branches=state.branches.keys(),
                    metadata=metadata,
                    predecessor_id=replaced,
                    generated=generated,
                    owner=owner,
                )
                stored = await self._append(state, events)
            except ConcurrencyError as exc:
                # Another writer moved the session: reload it and decide again, after a short
                # random pause so that writers contending for one session spread out.
                fresh, conflict = True, exc
                await asyncio.sleep(random.random() * min(0.05, 0.001 * 2**attempt))  # noqa: S311
                continue
            recorded += stored
            after = self._cache.get(current)
            assert after is not None  # noqa: S101  # just appended and remembered
            assert after.last is not None  # noqa: S101  # a thought was just folded in
            return ThinkOutcome(current, after, after.last, recorded, replaced)
        assert conflict is not None  # noqa: S101  # the loop only ends early on success
        raise conflict

    def _retirement(self, state: SessionState, *, clear: bool) -> LedgerEvent | None:
        if state.version == 0 or state.ended is not None:
            return None
        if clear:
            return SessionCleared(reason="cleared by the caller")
        if self.ttl is not None and state.updated_at is not None:
            idle = self._clock() - state.updated_at
            if idle > self.ttl:
                return SessionExpired(
                    idle_seconds=idle.total_seconds(), ttl_seconds=self.ttl.total_seconds()
                )
        return None

    async def get_session(self, session_id: str) -> SessionState | None:
        """Return a session's current state, or ``None`` when it has no events.

        An open session found idle past the TTL is recorded as expired now.

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        state = await self._load(check_id(session_id), fresh=True)
        if state.version == 0:
            return None
        expiry = self._retirement(state, clear=False)
        if expiry is not None:
            # Someone else may have moved it meanwhile; the reload below shows what they did.
            with contextlib.suppress(ConcurrencyError):
                await self._append(state, [expiry])
        return await self._complete(session_id)

    async def clear_session(self, session_id: str, *, reason: str | None = None) -> bool:
        """Retire a session: append a cleared event (its history stays in the log).

        Returns:
            True when the session was open and is now cleared; False when there was nothing to
            clear (unknown, already cleared or expired).

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        for _attempt in range(_ATTEMPTS):
            state = await self._load(check_id(session_id), fresh=True)
            if state.version == 0 or state.ended is not None:
                return False
            try:
                await self._append(state, [SessionCleared(reason=reason)])
            except ConcurrencyError:
                continue
            return True
        return False

    async def clear_all_sessions(self, *, reason: str | None = None) -> int:
        """Clear every open session; returns how many were cleared.

        Raises:
            StoreError: The store failed.
        """
        cleared = 0
        after: str | None = None
        while heads := await self._store.list_heads(after_session_id=after, limit=500):
            for head in heads:
                if await self.clear_session(head.session_id, reason=reason):
                    cleared += 1
            after = heads[-1].session_id
        return cleared

    # -- observing and closing ------------------------------------------------------------------

    def observe(self, observer: Callable[[list[RecordedEvent]], None]) -> None:
        """Call ``observer`` with the events of each append through this ledger, once stored.

        It runs on the appending task, right after the commit: it must be quick and must not
        raise (a telemetry stream only queues them, see :mod:`thoughtledger.api.otel.live`).
        """
        self._observers.append(observer)

    async def aclose(self) -> None:
        """Close the store."""
        await self._store.aclose()

    # -- internals ------------------------------------------------------------------------------

    def _known_branches(self, session_id: str, version: int) -> Collection[str] | None:
        # Every branch id stays in a held state, trimmed or not; only a state at the session's
        # current version answers (one behind could miss a branch another writer opened).
        held = self._cache.get(session_id)
        return held.branches.keys() if held is not None and held.version == version else None

    async def _load(self, session_id: str, *, fresh: bool) -> SessionState:
        cached = self._cache.get(session_id)
        if cached is not None and not fresh:
            return cached
        state = cached if cached is not None else empty(session_id)
        # In pages, trimmed between them: a head needs only the latest thoughts, so catching
        # up with a session of a million thoughts holds one page at a time, not the million.
        while records := await self._store.read_stream(
            session_id, after_version=state.version, limit=_LOAD_PAGE
        ):
            state = self._cache.bounded(replay(records, state))
            if len(records) < _LOAD_PAGE:
                break
        if state.version:
            self._cache.remember(state)
        return state

    async def _append(self, state: SessionState, events: list[LedgerEvent]) -> list[RecordedEvent]:
        try:
            recorded = await self._store.append(
                state.session_id, events, expected_version=state.version
            )
        except ConcurrencyError:
            self._cache.forget(state.session_id)
            raise
        self._cache.remember(replay(recorded, state))
        for observer in self._observers:
            observer(recorded)
        return recorded

    async def _complete(self, session_id: str) -> SessionState:
        """Return the session's current state holding every thought.

        Whole histories are cached apart from the heads that recording uses, and caught up
        with the log on each read.
        """
        head = await self._load(session_id, fresh=True)
        if head.complete:
            self._full.keep(head)
            return head
        full = self._full.get(session_id)
        if full is None or full.version > head.version:
            full = replay(await self._store.read_stream(session_id), empty(session_id))
        elif full.version < head.version:
            records = await self._store.read_stream(session_id, after_version=full.version)
            full = replay(records, full)
        self._full.keep(full)
        return full


__all__ = ["DEFAULT_TTL", "HistoryPage", "Ledger", "Profile", "ThinkOutcome"]
