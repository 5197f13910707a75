"""Recording: decide, append, and decide again when another writer moved the session first.

A private part of :class:`thoughtledger.api.Ledger`, which records every thought, clear, expiry
and redaction through it: each append goes to the store at the version the session was read at,
moves the held head, and is told to the ledger's observers once stored.
"""

import asyncio
import contextlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from thoughtledger.api.access import Guard
from thoughtledger.api.caches import Held
from thoughtledger.api.errors import not_found
from thoughtledger.ledger.decide import Generated, ThinkCommand, decide_thought, starts_a_run
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import ConcurrencyError
from thoughtledger.ledger.events import (
    LedgerEvent,
    SessionCleared,
    SessionExpired,
    ThoughtRedacted,
)
from thoughtledger.ledger.ids import new_session_id
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.projections.entries import ThoughtEntry
from thoughtledger.projections.state import SessionState, empty, replay


@dataclass(frozen=True, slots=True)
class ThinkOutcome:
    """What one recorded thought produced.

    Attributes:
        session_id: The session the thought landed in (a new one after a clear or expiry).
        state: The session after the thought.
        entry: The thought as recorded.
        recorded: Every event appended by this call, in order (a retired session's ``cleared``
            or ``expired`` event first, when there was one).
        replaced_session_id: The session this call retired, if any.
    """

    session_id: str
    state: SessionState
    entry: ThoughtEntry
    recorded: list[RecordedEvent]
    replaced_session_id: str | None = None


@dataclass(frozen=True, slots=True)
class Appended:
    """What :meth:`Recorder.record` appended.

    Attributes:
        before: The session as the thoughts were decided on (a new session's empty state when
            they started one).
        decided: Each thought's events, in order.
        stored: The thoughts' events as stored (``decided`` concatenated, with versions).
        retired: The retired session's ``cleared`` or ``expired`` event as stored, if any.
        replaced: The session the thoughts' new session follows, if they started one.
    """

    before: SessionState
    decided: list[list[LedgerEvent]]
    stored: list[RecordedEvent]
    retired: list[RecordedEvent]
    replaced: str | None


_ATTEMPTS = 32
"""Times thoughts are decided again after a conflict before the conflict is raised."""


class Recorder:
    """Appends a ledger's events: thoughts, retirements and redactions.

    Args:
        store: The log.
        held: The sessions the ledger holds (each append moves the session's head).
        ttl: Idle time after which an open session expires (``None``: never).
        clock: Source of the current time (UTC), for expiry decisions.
    """

    def __init__(
        self,
        store: EventStore,
        held: Held,
        *,
        ttl: timedelta | None,
        clock: Callable[[], datetime],
    ) -> None:
        self._store = store
        self._held = held
        self._ttl = ttl
        self._clock = clock
        self.observers: list[Callable[[list[RecordedEvent]], None]] = []
        """Told the events of each append, once stored (see :meth:`Ledger.observe`)."""

    async def think(
        self,
        session_id: str | None,
        command: ThinkCommand,
        *,
        clear: bool,
        metadata: Mapping[str, str] | None,
        generated: Generated | None,
        owner: str | None,
        may_change: Guard,
        new_run: bool,
    ) -> ThinkOutcome:
        """Record one thought (see :meth:`thoughtledger.api.Ledger.think`).

        Raises:
            InvalidThoughtError: The command breaks a rule; the thought was not appended (a
                clear or expiry due before it may be stored).
            SessionNotFoundError: ``may_change`` refuses the session; nothing was appended.
            ConcurrencyError: Other writers kept moving the session; nothing was appended.
            StoreError: The store failed; nothing was appended.
        """

        def decide(state: SessionState, predecessor_id: str | None) -> list[list[LedgerEvent]]:
            return [
                decide_thought(
                    command,
                    version=state.version,
                    known_branches=state.branches.keys(),
                    metadata=metadata,
                    predecessor_id=predecessor_id,
                    generated=generated,
                    owner=owner,
                )
            ]

        appended = await self.record(
            session_id,
            decide,
            clear=clear,
            may_change=may_change,
            starts_run=new_run and starts_a_run(command),
        )
        current = appended.before.session_id
        after = self._held.heads.get(current)
        assert after is not None  # noqa: S101  # just appended and remembered
        assert after.last is not None  # noqa: S101  # a thought was just folded in
        recorded = [*appended.retired, *appended.stored]
        return ThinkOutcome(current, after, after.last, recorded, appended.replaced)

    async def record(
        self,
        session_id: str | None,
        decide: Callable[[SessionState, str | None], list[list[LedgerEvent]]],
        *,
        clear: bool,
        may_change: Guard,
        starts_run: bool,
    ) -> Appended:
        """Decide thoughts on the session as loaded and append them, again while others move it.

        The one way thoughts are recorded, alone or in a batch: an open session that is due a
        retirement (``clear``, or idle past the TTL) gets it first; a thought for a retired
        session, or one that starts a run with ``starts_run``, goes to a new session that
        records the one it follows. A conflict reloads the session and decides again.

        Args:
            session_id: The session to continue; ``None`` starts a new one.
            decide: The thoughts' events, one list per thought, for a session state and the
                session it follows (``None`` unless it starts after another); called again on
                each reload.
            clear: Retire an open session first (once, even when the thoughts are decided again).
            may_change: Whether the principal recording may change a session of a given
                owner (the access rules' answer, see :func:`~thoughtledger.api.access.guard`):
                a session with events it refuses is answered as not found. Asked of each
                session as loaded, so a session another started meanwhile is refused too.
            starts_run: The first thought starts a new run, and a session that already holds
                thoughts is left for a new one.

        Returns:
            The session decided on and what was appended to it (and to the one it replaced).

        Raises:
            InvalidThoughtError: ``decide`` refused the thoughts; none was appended (a
                retirement due before them may be stored).
            SessionNotFoundError: ``may_change`` refuses the session; nothing was appended.
            ConcurrencyError: Other writers kept moving the session; no thought was appended.
            StoreError: The store failed; no thought was appended.
        """
        current = session_id if session_id is not None else new_session_id()
        retired: list[RecordedEvent] = []
        replaced: str | None = None
        fresh = False
        conflict: ConcurrencyError | None = None
        for attempt in range(_ATTEMPTS):
            state = await self._held.load(current, fresh=fresh)
            if state.version and not may_change(state.owner):
                raise not_found(current)
            retire = self._retirement(state, clear=clear and replaced is None)
            try:
                if retire is not None:
                    retired += await self.append(state, [retire])
                if state.version and (
                    retire is not None
                    or state.ended is not None
                    or (starts_run and state.thought_count)
                ):
                    replaced, current = current, new_session_id()
                    state = empty(current)
                decided = decide(state, replaced)
                stored = await self.append(state, [event for own in decided for event in own])
            except ConcurrencyError as exc:
                # Another writer moved the session: reload it and decide again, after a short
                # random pause so that writers contending for one session spread out.
                fresh, conflict = True, exc
                await asyncio.sleep(random.random() * min(0.05, 0.001 * 2**attempt))  # noqa: S311
                continue
            return Appended(state, decided, stored, retired, replaced)
        assert conflict is not None  # noqa: S101  # the loop only ends early on success
        raise conflict

    async def expire_if_idle(self, session_id: str) -> bool:
        """Record an open session found idle past the TTL as expired; whether it has events.

        Raises:
            StoreError: The store failed.
        """
        state = await self._held.load(session_id, fresh=True)
        if state.version == 0:
            return False
        expiry = self._retirement(state, clear=False)
        if expiry is not None:
            # Someone else may have moved it meanwhile; a reload shows what they did.
            with contextlib.suppress(ConcurrencyError):
                await self.append(state, [expiry])
        return True

    async def clear(self, session_id: str, reason: str | None) -> bool:
        """Append a cleared event to an open session; whether there was one to clear.

        Raises:
            StoreError: The store failed.
        """
        for _attempt in range(_ATTEMPTS):
            state = await self._held.load(session_id, fresh=True)
            if state.version == 0 or state.ended is not None:
                return False
            try:
                await self.append(state, [SessionCleared(reason=reason)])
            except ConcurrencyError:
                continue
            return True
        return False

    async def append_at(
        self, session_id: str, events: list[LedgerEvent], *, expected_version: int
    ) -> list[RecordedEvent]:
        """Append ``events`` to a session that must be at ``expected_version``.

        Raises:
            ConcurrencyError: The session is at another version.
            StoreError: The store failed.
        """
        state = await self._held.load(session_id, fresh=True)
        if state.version != expected_version:
            raise ConcurrencyError(session_id, expected_version, state.version)
        return await self.append(state, events)

    async def append(
        self,
        state: SessionState,
        events: list[LedgerEvent],
        *,
        event_ids: Sequence[UUID] | None = None,
    ) -> list[RecordedEvent]:
        """Append ``events`` after ``state``; the head moves, observers hear.

        ``event_ids``: the events' ids when the caller derives them (see
        :meth:`.EventStore.append`); fresh ones otherwise.

        Nothing derived runs here: the loop marks hear of the append as an observer and fold it
        later (see :mod:`thoughtledger.api.loop_follow`).

        Raises:
            ConcurrencyError: The session moved past ``state`` (its head is forgotten).
            StoreError: The store failed.
        """
        try:
            recorded = await self._store.append(
                state.session_id, events, expected_version=state.version, event_ids=event_ids
            )
        except ConcurrencyError:
            self._held.heads.forget(state.session_id)
            raise
        self._held.heads.remember(replay(recorded, state))
        if any(isinstance(event, ThoughtRedacted) for event in events):
            # Forks hold this session's thoughts as of their fork point: read them afresh.
            self._held.forget_inheritors(state.session_id)
        for observer in self.observers:
            observer(recorded)
        return recorded

    def _retirement(self, state: SessionState, *, clear: bool) -> LedgerEvent | None:
        if state.version == 0 or state.ended is not None:
            return None
        if clear:
            return SessionCleared(reason="cleared by the caller")
        if self._ttl is not None and state.updated_at is not None:
            idle = self._clock() - state.updated_at
            if idle > self._ttl:
                return SessionExpired(
                    idle_seconds=idle.total_seconds(), ttl_seconds=self._ttl.total_seconds()
                )
        return None


__all__ = ["Appended", "Recorder", "ThinkOutcome"]
