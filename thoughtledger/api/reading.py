"""Reading sessions back: a state now or as it was, its events, a step-by-step replay, the log.

A private part of :class:`thoughtledger.api.Ledger`, which answers these reads through it: time
travel cuts the complete state the ledger holds for a session (see :meth:`Held.complete`), and the
log's own reads (a subscription, a rebuild of every session, a hash-chain walk) go straight to the
store.
"""

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import datetime

from thoughtledger.api.caches import Held, cyclic_gc_paused
from thoughtledger.api.errors import not_found
from thoughtledger.api.lookup import all_heads
from thoughtledger.ledger.chain import GENESIS_HASH, ChainWalk, StoredRow, VerifyReport
from thoughtledger.ledger.envelope import EventRow, RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError
from thoughtledger.ledger.events import ACTION_TYPE
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.ledger.store.rows import RowReads
from thoughtledger.projections.actions import ActionEntry, actions_in
from thoughtledger.projections.asof import as_of_version as as_of
from thoughtledger.projections.asof import check_time, check_version, version_at
from thoughtledger.projections.fastfold import fold_rows
from thoughtledger.projections.state import SessionState, empty, grafted, replay

LAST_POSITION = 2**63 - 1
"""The largest position any backend stores (a signed 64-bit integer; importing the schema's
constant would import SQLAlchemy on every ledger's first read)."""

ACTIONS_GAP = 32
"""Fewest events between two of a session's actions that :meth:`Reads.actions` reads apart: closer
ones are read in one range, the events between them read and left (one query, not one each)."""
_ACTIONS_SLICE = 1000


class Reads:
    """The ledger's reads of sessions and of the log.

    Args:
        store: The log.
        rows: The log's rows, undecoded (a rebuild reads them).
        held: The sessions the ledger holds (whole histories are cut from there).
    """

    def __init__(self, store: EventStore, rows: RowReads, held: Held) -> None:
        self._store = store
        self._rows = rows
        self._held = held

    async def state(
        self,
        session_id: str,
        *,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> SessionState:
        """Return a session's state now, or as it was at a version or a time.

        Args:
            session_id: The session.
            as_of_version: Fold only the first N events.
            as_of_time: Fold only the events recorded at or before this (aware) time.

        Raises:
            SessionNotFoundError: The session has no events (or none at that time).
            InvalidInputError: A malformed id, both bounds given, or a bound out of range.
            StoreError: The store failed.
        """
        state, _latest = await self.state_with_latest(
            session_id, as_of_version=as_of_version, as_of_time=as_of_time
        )
        return state

    async def state_with_latest(
        self,
        session_id: str,
        *,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> tuple[SessionState, int]:
        """Like :meth:`state`, with the session's latest version from the same read.

        Returns:
            The state (now, or as of the bound) and the version the session is at now.

        Raises:
            SessionNotFoundError: The session has no events (or none at that time).
            InvalidInputError: A malformed id, both bounds given, or a bound out of range.
            StoreError: The store failed.
        """
        check_id(session_id)
        if as_of_version is not None and as_of_time is not None:
            raise InvalidInputError("give as_of_version or as_of_time, not both")
        state = await self._held.complete(session_id)
        latest = state.version
        if latest == 0:
            raise not_found(session_id)
        if as_of_version is not None:
            return as_of(state, check_version(session_id, as_of_version, latest)), latest
        if as_of_time is not None:
            version = version_at(state, check_time(as_of_time))
            if version == 0:
                raise SessionNotFoundError(
                    f"session {session_id!r} had no events yet at {as_of_time.isoformat()}"
                )
            return as_of(state, version), latest
        return state, latest

    async def events(
        self,
        session_id: str,
        *,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> list[RecordedEvent]:
        """Return a session's events, all or up to a version or a time.

        Raises:
            SessionNotFoundError: The session has no events (or none at that time).
            InvalidInputError: A malformed id or bound.
            StoreError: The store failed.
        """
        state = await self.state(session_id, as_of_version=as_of_version, as_of_time=as_of_time)
        return await self._store.read_stream(session_id, to_version=state.version)

    async def actions(
        self, session_id: str, *, as_of_version: int | None = None
    ) -> list[ActionEntry]:
        """Return the actions an agent took in a session, all or up to a version, in order.

        Found by their versions (the store's index of a session's actions), then read in
        ranges: a session of many thoughts and few actions reads only those, one of many
        actions reads each stretch of them at once (see :data:`ACTIONS_GAP`), in slices, so
        memory holds a slice and the actions.

        Args:
            session_id: The session.
            as_of_version: Only the actions among its first N events.

        Raises:
            SessionNotFoundError: The session has no events.
            InvalidInputError: A malformed id, or a version out of range.
            EventDecodingError: A stored event cannot be decoded.
            StoreError: The store failed.
        """
        check_id(session_id)
        head = await self._store.stream_head(session_id)
        if head is None:
            raise not_found(session_id)
        to = head.version
        if as_of_version is not None:
            to = check_version(session_id, as_of_version, to)
        versions = await self._rows.session_versions_of_types(
            session_id, (ACTION_TYPE,), to_version=to
        )
        wanted = set(versions)
        found: list[ActionEntry] = []
        for first, last in _stretches(versions, ACTIONS_GAP):
            after = first - 1
            while after < last:
                records = await self._store.read_stream(
                    session_id, after_version=after, to_version=last, limit=_ACTIONS_SLICE
                )
                if not records:
                    break
                found += actions_in(r for r in records if r.version in wanted)
                after = records[-1].version
        return found

    async def replay(self, session_id: str) -> AsyncIterator[tuple[RecordedEvent, SessionState]]:
        """Yield each event of a session with the state just after it, for stepping through.

        Raises:
            SessionNotFoundError: The session has no events.
            StoreError: The store failed.
        """
        state = empty(check_id(session_id))
        for record in await self.events(session_id):
            state = replay([record], state)
            yield record, state

    def subscribe(
        self,
        *,
        after: int = 0,
        session_id: str | None = None,
        poll_interval: float | None = None,
    ) -> AsyncIterator[RecordedEvent]:
        """Iterate over every event after position ``after``, then over each one as it commits.

        ``async for event in ledger.subscribe(after=position)``: the events already stored come
        first, in position order, then each new one as it is appended by this process or any
        other sharing the ledger, with no gap and no duplicate at the switch. Resume after a
        restart by passing the last ``event.position`` seen. The iteration ends when the ledger
        is closed; leaving it earlier (``break``, cancelling the task) releases what it holds.

        Args:
            after: The last position already seen (0: from the beginning of the log).
            session_id: Only this session's events (a session continued under a new id, after
                it was cleared or expired, is another session).
            poll_interval: Seconds between checks for other processes' commits on SQLite, or
                between safety re-reads on PostgreSQL (woken by NOTIFY otherwise); ``None``:
                the backend's default.

        Raises:
            InvalidInputError: A negative position, a malformed session id or interval (raised
                at the call, before iterating).
            StoreError: The ledger is closed (raised at the call); (while iterating) the store
                failed.
            EventDecodingError: (while iterating) a stored event cannot be decoded.
        """
        if isinstance(after, int) and after > LAST_POSITION:
            # Past what a position can be (a signed 64-bit integer): SQLite would follow
            # nothing, silently, and PostgreSQL end at once; say so instead.
            raise InvalidInputError(
                f"after must be a position from 0 to {LAST_POSITION}, not {after}"
            )
        return self._store.subscribe(
            after=after, session_id=session_id, poll_interval=poll_interval
        )

    async def rebuild(self, *, page: int = 20_000) -> dict[str, SessionState]:
        """Rebuild every session's complete state (history, branch sets) from the whole log.

        For analysis across many runs: stored rows are folded without decoding each event (see
        :mod:`thoughtledger.projections.fastfold`), in pages of ``page`` events.

        Raises:
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed.
        """
        states: dict[str, SessionState] = {}
        after = 0
        with cyclic_gc_paused():
            while rows := await self._rows.read_all_rows(after_position=after, limit=page):
                fold_rows(rows, states)
                after = rows[-1].position
                # A long rebuild lets the loop's other tasks run between pages.
                await asyncio.sleep(0)
        return _grafted_forks(states)

    async def verify(self, session_id: str) -> VerifyReport:
        """See :meth:`thoughtledger.api.Ledger.verify`, which this carries out."""
        return await self._store.verify(check_id(session_id))

    async def verify_all(
        self, *, page: int = 20_000, progress: Callable[[int, int], None] | None = None
    ) -> tuple[list[VerifyReport], set[str], set[str]]:
        """Every session's chain, walked in one pass over the log.

        Every stored row is fed to its session's walk (a row planted past a head is caught, as
        a session's own walk catches it). The heads are read before and after the walk: a
        session whose head moved meanwhile, or whose walk ended short of its head without a
        broken link, is named for its own walk to settle (so a walk never reports what a read
        that ended early did not see).

        Args:
            page: Rows read per query.
            progress: Called after each page with the events walked and the events to walk.

        Returns:
            The reports, the sessions that start as forks (their links are checked apart), and
            the sessions to walk again alone.

        Raises:
            StoreError: The store failed.
        """
        before = {head.session_id: head for head in await all_heads(self._store)}
        total = sum(head.version for head in before.values())
        walks: dict[str, ChainWalk] = {}
        forks: set[str] = set()
        walked = after = 0
        while rows := await self._rows.read_all_event_rows(after_position=after, limit=page):
            after = rows[-1].position
            for row in rows:
                walk = walks.get(row.session_id)
                if walk is None:
                    walk = walks[row.session_id] = ChainWalk(row.session_id)
                walk.feed(StoredRow(*row))
                if row.version == 1 and _names_a_source(row):
                    forks.add(row.session_id)
            walked += len(rows)
            if progress is not None:
                progress(walked, total)
            await asyncio.sleep(0)  # a long walk lets the loop's other tasks run between pages
        if progress is not None and not walked:
            progress(0, total)
        heads = {head.session_id: head for head in await all_heads(self._store)}
        recorded = await self._store.recorded_heads()
        reports = []
        unsettled: set[str] = set()
        for session_id in dict.fromkeys([*heads, *walks, *recorded]):
            head = heads.get(session_id)
            walk = walks.get(session_id) or ChainWalk(session_id)
            if before.get(session_id) != head or (
                head is not None and not walk.failed and walk.checked != head.version
            ):
                # Appended to while the walk ran, or its log read ended short of its head (on
                # PostgreSQL a read of the whole log stops before a transaction in flight
                # anywhere on the server): its own walk settles it.
                unsettled.add(session_id)
            # A head kept beside the log is what the session's own walk compares with (a tail
            # cut before schema step 19); else the head read from the log, which a session
            # whose first event is gone lacks.
            kept = recorded.get(session_id)
            if kept is None:
                kept = (head.version, head.hash) if head else (0, GENESIS_HASH)
            reports.append(walk.end(kept))
        return reports, forks, unsettled


def _names_a_source(row: EventRow) -> bool:
    """Whether a session's first row starts it as a fork (its link is checked after the walk)."""
    if row.event_type != "session.started" or '"fork_of"' not in row.payload:
        return False
    try:
        return json.loads(row.payload).get("fork_of") is not None
    except (ValueError, AttributeError):
        return True  # unreadable: the link check reads it and says why


def _stretches(versions: list[int], gap: int) -> list[tuple[int, int]]:
    """``versions`` (ascending) as ranges, first to last, where none is ``gap`` or more apart."""
    ranges: list[tuple[int, int]] = []
    for version in versions:
        if ranges and version - ranges[-1][1] < gap:
            ranges[-1] = (ranges[-1][0], version)
        else:
            ranges.append((version, version))
    return ranges


def _grafted_forks(states: dict[str, SessionState]) -> dict[str, SessionState]:
    """``states`` with each fork's source's thoughts put first, forks of forks in turn."""
    done: dict[str, SessionState] = {}

    def settle(session_id: str, seen: frozenset[str]) -> SessionState:
        state = done.get(session_id) or states[session_id]
        point = state.fork
        if session_id in done or point is None or point.session_id not in states:
            done[session_id] = state
            return state
        if point.session_id in seen:  # a forged cycle of forks: left as folded
            done[session_id] = state
            return state
        source = settle(point.session_id, seen | {session_id})
        if point.version <= source.version:
            state = grafted(state, as_of(source, point.version))
        done[session_id] = state
        return state

    for session_id in states:
        settle(session_id, frozenset())
    return done


__all__ = ["ACTIONS_GAP", "Reads", "cyclic_gc_paused"]
