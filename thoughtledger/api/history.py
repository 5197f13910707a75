"""Paged reading of a session's history, in memory bounded by the page, not by the session.

A private part of :class:`thoughtledger.api.Ledger`, which pages through it. A page is read from
the log by keyset on version (:meth:`.EventStore.read_stream` with a limit) and built by
:class:`thoughtledger.projections.paging.PageBuilder`; nothing folds the whole session. What a page
says about the session besides its items is read with two indexed point reads and the versions
of its events that are not thoughts, not a fold (see :meth:`Paging.history`).

A thought reads redacted on a page once a ``thought.redacted`` event of its session names it, as
the fold shows it, even where a redaction cut short left its text stored. That holds for a page
read as of an earlier version or time too, as for the fold's view as of one (a cut of the state
now) and as once the text is stripped: a recorded redaction is never undone by reading further
back. A session's redaction events, each with the version it names, come from an index
(``EventStore.redactions``), without decoding an event.
"""

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime

from thoughtledger.api.errors import not_found
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError
from thoughtledger.ledger.events import (
    EVENT_TYPES,
    THOUGHT_TYPES,
    SessionCleared,
    SessionExpired,
    SessionStarted,
)
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.ledger.store.redaction import Redacting
from thoughtledger.ledger.store.rows import RowReads
from thoughtledger.projections.actions import ActionEntry
from thoughtledger.projections.answers import JsonDict
from thoughtledger.projections.asof import check_time, check_version
from thoughtledger.projections.entries import thought_entry
from thoughtledger.projections.paging import HistoryCursor, PageBuilder, compact_size

DEFAULT_HISTORY_LIMIT = 100
"""Thoughts on a page when the caller does not say."""

SCAN_BUDGET = 10_000
"""Most events one page reads: a page filtered by a rare branch may come back short (even empty)
with ``more`` set, rather than one call reading a whole long session."""

_BRANCH_CHUNK = 256
"""Events read at a time when a branch filter skips most of them."""

_BOUNDS = frozenset({"session.started", "session.cleared", "session.expired"})
ASIDE_TYPES = tuple(sorted(set(EVENT_TYPES) - THOUGHT_TYPES - _BOUNDS))
"""The types of a session's events that are neither a thought nor its start or end (annotations,
actions, redactions): a session's thought count leaves them out. Derived, so that a new type
that is not a thought is left out too."""


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of a session's history.

    Attributes:
        session_id: The session.
        items: The thoughts on this page, each exactly as
        :func:`thoughtledger.projections.answers.thought_history`
            renders it, in version order.
        more: Whether the session (up to :attr:`version`) has events after this page.
        next_cursor: Pass it as ``after`` to read the next page (``None`` when there is no more).
        status: The session's status at :attr:`version`.
        version: The version this page reads up to (the latest, or the one asked for).
        latest_version: The session's latest version.
        thought_count: How many thoughts the session holds up to :attr:`version`.
        branch: The branch filter, if any.
        actions: The actions an agent took among the events this page read, in version order
            (each names the thought it followed, which an earlier page may hold); the pages of
            a session carry each action once. None with a branch filter.
    """

    session_id: str
    items: list[JsonDict]
    more: bool
    next_cursor: str | None
    status: str
    version: int
    latest_version: int
    thought_count: int
    branch: str | None = None
    actions: tuple[ActionEntry, ...] = ()


class Paging:
    """The ledger's paged reads.

    Args:
        store: The log.
        rows: The versions of a session's events that are not thoughts (the count leaves them
            out).
        redactions: Which thoughts were redacted (a page says so).
        known_branches: A session's branch ids at a version when known without reading (the
            ledger's held heads), else ``None``: a mistyped branch of a long session the ledger
            is recording is refused at once rather than when a scan ends.
    """

    def __init__(
        self,
        store: EventStore,
        rows: RowReads,
        redactions: Redacting,
        known_branches: Callable[[str, int], Collection[str] | None],
    ) -> None:
        self._store = store
        self._rows = rows
        self._redactions = redactions
        self._known_branches = known_branches

    async def history(
        self,
        session_id: str,
        *,
        limit: int = DEFAULT_HISTORY_LIMIT,
        after: str | None = None,
        branch: str | None = None,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
        max_bytes: int | None = None,
        size_of: Callable[[JsonDict], int] = compact_size,
    ) -> HistoryPage:
        """Return one page of a session's thoughts, now or as of a version or a time.

        Memory and time depend on the page, not on the session: the page's events are read by
        version range, and the session's status and thought count come from two point reads (its
        first event and the last thought read up to) and the versions of its events that are
        neither thoughts nor its start or end (annotations, actions, redactions: see
        :data:`ASIDE_TYPES`). The count relies on what every session the ledger records keeps:
        ``session.started`` only ever first, a clear or expiry only ever last but for those,
        every other event a thought or one of those (counted as the state the facade holds
        counts it). A fork's count holds the thoughts it inherits, as its state's does (its
        source's count at the fork's version: one more point read a fork).

        A thought a ``thought.redacted`` event names reads ``[redacted]`` with ``"redacted":
        true``, as the fold shows it, whether or not its text was stripped yet, and on a read
        as of any version or time (as the fold's view as of one shows it). Only a session with
        redactions pays for it: one indexed read of what each names.

        A cursor holds where the next page starts, the branch filter and, for a read as of a
        version or time, that version: later pages read the same snapshot without the bound
        being given again (given again, it must name the same version). A cursor of a read of
        the session *now* reads up to the latest version at each page, so thoughts recorded
        while paging are read too.

        Args:
            session_id: The session.
            limit: Most thoughts on the page (at least 1). A page reads at most
                :data:`SCAN_BUDGET` events, so a larger limit gives pages of at most that many.
            after: The ``next_cursor`` of the previous page (``None``: the first page).
            branch: Only the thoughts of this branch, those that open or extend it (as
                :meth:`Session.branches` lists them). An unknown branch is refused
                on the first page when the ledger holds the session's state (it is recording
                it), else once the read reaches the end without seeing it: on the first page
                unless the session is longer than :data:`SCAN_BUDGET` events.
            as_of_version: Read the session as of its first N events.
            as_of_time: Read the session as it was at this (aware) time.
            max_bytes: Most bytes the page's items may take, as ``size_of`` measures them; a
                thought larger than this alone is still returned, alone.
            size_of: How the caller's answer measures an item (default: compact JSON, UTF-8).

        Returns:
            The page.

        Raises:
            SessionNotFoundError: The session has no events (or none at that time).
            InvalidInputError: A malformed id, a limit below 1, both bounds, a bound past the
                end, a cursor that is malformed or belongs to another session, branch or bound,
                or a branch the session does not have.
            EventDecodingError: A stored event cannot be decoded.
            StoreError: The store failed.
        """
        check_id(session_id)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError("limit must be an integer >= 1")
        if as_of_version is not None and as_of_time is not None:
            raise InvalidInputError("give as_of_version or as_of_time, not both")
        if max_bytes is not None and (isinstance(max_bytes, bool) or max_bytes < 1):
            raise InvalidInputError("max_bytes must be an integer >= 1")
        cursor = _cursor(after, session_id, branch)
        if cursor is not None:
            branch = cursor.branch
        head = await self._store.stream_head(session_id)
        if head is None:
            raise not_found(session_id)
        pinned = await self._bound(session_id, head.version, as_of_version, as_of_time)
        if cursor is not None:
            if pinned is not None and pinned != cursor.to_version:
                raise InvalidInputError(
                    "this cursor reads the session "
                    + (f"as of version {cursor.to_version}" if cursor.to_version else "now")
                    + ": pass it without a different as-of bound"
                )
            pinned = cursor.to_version
        to = pinned if pinned is not None else head.version
        if branch is not None and cursor is None:
            known = self._known_branches(session_id, head.version)
            if known is not None and branch not in known:
                raise InvalidInputError(f"session {session_id!r} has no branch {branch!r}")
        start = cursor.after_version if cursor is not None else 0
        if start > to:
            raise InvalidInputError("this cursor is past the session's end: not a cursor of it")
        marks = [
            mark
            for mark in await self._redactions.redactions(session_id)
            if mark.version <= head.version
        ]
        # Every redaction recorded applies, even to a read as of before it: the text it names is
        # gone once stripped, and the fold's view as of any version shows it redacted already.
        # A page reads at most SCAN_BUDGET events after ``start``: no other thought can be on it.
        upto = min(to, start + SCAN_BUDGET)
        named = frozenset(mark.names for mark in marks if start < mark.names <= upto)
        builder = PageBuilder(limit, branch, max_bytes, size_of, start, named)
        chunk = limit + 2 if branch is None else max(limit + 2, _BRANCH_CHUNK)
        scanned = 0
        while not builder.full and builder.after_version < to and scanned < SCAN_BUDGET:
            records = await self._store.read_stream(
                session_id,
                after_version=builder.after_version,
                to_version=to,
                limit=min(chunk, SCAN_BUDGET - scanned),
            )
            if not records:
                break
            builder.feed(records)
            scanned += len(records)
        more = builder.after_version < to
        seen = bool(builder.items) or (cursor is not None and cursor.seen)
        if branch is not None and not seen and not more:
            at = f" at version {to}" if pinned is not None else ""
            raise InvalidInputError(f"session {session_id!r} has no branch {branch!r}{at}")
        status, count = await self._summary(session_id, to)
        next_cursor = (
            HistoryCursor(session_id, builder.after_version, pinned, branch, seen).encode()
            if more
            else None
        )
        return HistoryPage(
            session_id=session_id,
            items=builder.items,
            more=more,
            next_cursor=next_cursor,
            status=status,
            version=to,
            latest_version=head.version,
            thought_count=count,
            branch=branch,
            actions=tuple(builder.actions),
        )

    async def _bound(
        self,
        session_id: str,
        latest: int,
        as_of_version: int | None,
        as_of_time: datetime | None,
    ) -> int | None:
        if as_of_version is not None:
            return check_version(session_id, as_of_version, latest)
        if as_of_time is None:
            return None
        moment = check_time(as_of_time)
        # A session's recorded times never go backwards (the store's contract), so the last
        # event recorded by ``moment`` is found by bisection: ~20 point reads for a million.
        low, high = 0, latest
        while low < high:
            middle = (low + high + 1) // 2
            if (await self._event(session_id, middle)).recorded_at <= moment:
                low = middle
            else:
                high = middle - 1
        if low == 0:
            raise SessionNotFoundError(
                f"session {session_id!r} had no events yet at {moment.isoformat()}"
            )
        return low

    async def _summary(self, session_id: str, version: int) -> tuple[str, int]:
        """The status and the number of thoughts among the first ``version`` events.

        Besides the start and a retirement, the events that are not thoughts (annotations,
        actions and redactions, each rare beside the thoughts) are read by their versions
        (:data:`ASIDE_TYPES`): trailing ones are stepped over for the status, and all are
        counted out.
        """
        aside = await self._rows.session_versions_of_types(
            session_id, ASIDE_TYPES, to_version=version
        )
        # Step over trailing ones by their versions: one read, however many there are.
        at, index = version, len(aside) - 1
        while index >= 0 and aside[index] == at and at > 1:
            at, index = at - 1, index - 1
        last = await self._event(session_id, at)
        first = last if at == 1 else await self._event(session_id, 1)
        entry = thought_entry(last)
        retired = isinstance(last.event, SessionCleared | SessionExpired)
        if isinstance(last.event, SessionCleared):
            status = "cleared"
        elif isinstance(last.event, SessionExpired):
            status = "expired"
        else:
            status = entry.status if entry is not None else "empty"
        count = (
            version - isinstance(first.event, SessionStarted) - (retired and at > 1) - len(aside)
        )
        # A fork holds its source's thoughts as of its fork version before its own, as its
        # state counts them: one count of a session's thoughts, paged or whole.
        return status, max(count, 0) + await self._inherited(first)

    async def _inherited(self, first: RecordedEvent) -> int:
        """How many thoughts a fork inherits (0 for any other session): its source's count."""
        started = first.event
        if not isinstance(started, SessionStarted) or started.fork_of is None:
            return 0
        _status, count = await self._summary(started.fork_of, started.fork_version or 0)
        return count

    async def _event(self, session_id: str, version: int) -> RecordedEvent:
        records = await self._store.read_stream(
            session_id, after_version=version - 1, to_version=version
        )
        if not records:
            raise not_found(session_id)
        return records[0]


def _cursor(after: str | None, session_id: str, branch: str | None) -> HistoryCursor | None:
    if after is None:
        return None
    cursor = HistoryCursor.decode(after)
    if cursor.session_id != session_id:
        raise InvalidInputError(
            f"this cursor pages session {cursor.session_id!r}, not {session_id!r}"
        )
    if branch is not None and branch != cursor.branch:
        raise InvalidInputError(
            f"this cursor pages {_which(cursor.branch)}, not branch {branch!r}: "
            "pass it without a different branch"
        )
    return cursor


def _which(branch: str | None) -> str:
    return "every thought" if branch is None else f"branch {branch!r}"


__all__ = ["DEFAULT_HISTORY_LIMIT", "SCAN_BUDGET", "HistoryPage", "Paging"]
