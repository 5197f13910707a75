"""The ledger's reading half: sessions, histories, search and look-ups, as the facade reads them.

:class:`thoughtledger.api.Ledger` is this and its writing half; each method here delegates to a
part built over the same store (:mod:`~thoughtledger.api.reading`,
:mod:`~thoughtledger.api.history`, :mod:`~thoughtledger.api.listing`,
:mod:`~thoughtledger.api.lookup`, :mod:`~thoughtledger.api.search`), which the
ledger makes when it is made.
"""

from collections.abc import AsyncIterator, Callable
from datetime import datetime

from thoughtledger.api.access import Principal
from thoughtledger.api.forking import Forking
from thoughtledger.api.history import DEFAULT_HISTORY_LIMIT, HistoryPage, Paging
from thoughtledger.api.listing import DEFAULT_PAGE, Listing, SessionsPage
from thoughtledger.api.lookup import Lookup, SessionMatch
from thoughtledger.api.reading import Reads
from thoughtledger.api.search import DEFAULT_SEARCH_PAGE, Searcher, SearchPage
from thoughtledger.ledger.chain import VerifyReport
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.store.base import StreamHead
from thoughtledger.projections.answers import JsonDict
from thoughtledger.projections.paging import compact_size
from thoughtledger.projections.state import SessionState


class LedgerReads:
    """What a ledger answers about sessions already recorded (no method here appends).

    Attributes are the parts each method delegates to, set by the ledger that this is half of.
    """

    _reads: Reads
    _paging: Paging
    _forking: Forking
    _listing: Listing
    _lookup: Lookup
    _searcher: Searcher

    # -- reading sessions back (see reading.py, history.py) -----------------------------------

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
        return await self._reads.state(
            session_id, as_of_version=as_of_version, as_of_time=as_of_time
        )

    async def state_with_latest(
        self,
        session_id: str,
        *,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> tuple[SessionState, int]:
        """Like :meth:`state`, with the session's latest version from the same read.

        Raises:
            SessionNotFoundError: The session has no events (or none at that time).
            InvalidInputError: A malformed id, both bounds given, or a bound out of range.
            StoreError: The store failed.
        """
        return await self._reads.state_with_latest(
            session_id, as_of_version=as_of_version, as_of_time=as_of_time
        )

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
        return await self._reads.events(
            session_id, as_of_version=as_of_version, as_of_time=as_of_time
        )

    def replay(self, session_id: str) -> AsyncIterator[tuple[RecordedEvent, SessionState]]:
        """Yield each event of a session with the state just after it, for stepping through.

        Raises:
            SessionNotFoundError: The session has no events.
            StoreError: The store failed.
        """
        return self._reads.replay(session_id)

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

        Memory and time depend on the page, not on the session (see
        :meth:`.history.Paging.history` for cursors, branches and redacted thoughts).

        Args:
            session_id: The session.
            limit: Most thoughts on the page (at least 1).
            after: The ``next_cursor`` of the previous page (``None``: the first page).
            branch: Only the thoughts of this branch.
            as_of_version: Read the session as of its first N events.
            as_of_time: Read the session as it was at this (aware) time.
            max_bytes: Most bytes the page's items may take, as ``size_of`` measures them.
            size_of: How the caller's answer measures an item (default: compact JSON, UTF-8).

        Raises:
            SessionNotFoundError: The session has no events (or none at that time).
            InvalidInputError: A malformed id, limit, bound or cursor, or an unknown branch.
            EventDecodingError: A stored event cannot be decoded.
            StoreError: The store failed.
        """
        return await self._paging.history(
            session_id,
            limit=limit,
            after=after,
            branch=branch,
            as_of_version=as_of_version,
            as_of_time=as_of_time,
            max_bytes=max_bytes,
            size_of=size_of,
        )

    def subscribe(
        self,
        *,
        after: int = 0,
        session_id: str | None = None,
        poll_interval: float | None = None,
    ) -> AsyncIterator[RecordedEvent]:
        """Iterate over every event after position ``after``, then over each one as it commits.

        See :meth:`.reading.Reads.subscribe` for resuming, ending and the backends' polling.

        Raises:
            InvalidInputError: A negative position, a malformed session id or interval (raised
                at the call, before iterating).
            StoreError: The ledger is closed (raised at the call); (while iterating) the store
                failed.
            EventDecodingError: (while iterating) a stored event cannot be decoded.
        """
        return self._reads.subscribe(
            after=after, session_id=session_id, poll_interval=poll_interval
        )

    async def rebuild(self, *, page: int = 20_000) -> dict[str, SessionState]:
        """Rebuild every session's complete state from the whole log, ``page`` events at a time.

        Raises:
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed.
        """
        return await self._reads.rebuild(page=page)

    async def verify(self, session_id: str) -> VerifyReport:
        """Walk a session's hash chain (see :meth:`.EventStore.verify`), and a fork's link.

        A fork fails when its source no longer holds, at the fork's version, the event hash
        its first event names.

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        return await self._forking.check_link(await self._reads.verify(session_id))

    # -- finding and listing sessions (see listing.py, lookup.py) --------------------------------

    async def facts(self, session_id: str) -> SessionState | None:
        """Return a session's state as recording holds it (only its latest thoughts), or ``None``.

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        return await self._listing.facts(session_id)

    async def search(
        self,
        query: str,
        *,
        principal: Principal | None = None,
        session_id: str | None = None,
        agent: str | None = None,
        client: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = DEFAULT_SEARCH_PAGE,
        cursor: str | None = None,
    ) -> SearchPage:
        """Find thoughts of every session by their words: one page, best match first.

        ``query`` holds words a thought must all contain, ``"phrases"``, ``prefix*`` words
        and ``-excluded`` words or phrases (see :mod:`thoughtledger.ledger.search_query`). The
        store's full-text index answers it (never a scan on SQLite or PostgreSQL).

        Args:
            query: What to find.
            principal: Who asks: an auditor finds every session's thoughts, anyone else those
                of the sessions it started; ``None`` (the ledger's own user) finds all.
            session_id: Only this session's thoughts.
            agent: Only sessions of this agent.
            client: Only sessions of this client software.
            since: Only thoughts recorded at or after this (aware) time.
            until: Only thoughts recorded before this (aware) time.
            limit: Hits per page (1 to 100).
            cursor: The ``next_cursor`` of the page before; ``None`` for the first page.

        Raises:
            InvalidInputError: A query with no word to find (or too long), a bad page size,
                cursor or session id.
            StoreError: The store failed, or (opened read-only) the ledger predates the index.
        """
        return await self._searcher.search(
            query,
            principal=principal,
            session_id=session_id,
            agent=agent,
            client=client,
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
        )

    async def list_sessions(
        self, *, limit: int = 100, after_session_id: str | None = None
    ) -> list[SessionState]:
        """Return up to ``limit`` sessions ordered by id, paging after ``after_session_id``.

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The store failed.
        """
        return await self._listing.list_sessions(limit=limit, after_session_id=after_session_id)

    async def recent_sessions(
        self, *, limit: int = DEFAULT_PAGE, cursor: str | None = None, owner: str | None = None
    ) -> SessionsPage:
        """Return a page of sessions, newest first (by start), with the cursor to the next page.

        Raises:
            InvalidInputError: A limit out of range or a cursor no listing gave.
            StoreError: The store failed.
        """
        return await self._listing.recent_sessions(limit=limit, cursor=cursor, owner=owner)

    async def owner_of(self, session_id: str) -> tuple[bool, str | None]:
        """Return whether a session exists and who owns it, from its first event (no fold).

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        return await self._listing.owner_of(session_id)

    async def head(self, session_id: str) -> StreamHead | None:
        """Return a session's head (version, hash, times), or ``None`` when it has no events.

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        return await self._lookup.head(session_id)

    async def heads(
        self, *, after_session_id: str | None = None, limit: int = 1000
    ) -> list[StreamHead]:
        """Return up to ``limit`` heads in id order, paging after ``after_session_id``.

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The store failed.
        """
        return await self._lookup.heads(after_session_id=after_session_id, limit=limit)

    async def all_heads(self, *, cap: int | None = None) -> list[StreamHead]:
        """Every session's head, in id order (the first ``cap`` of them when a cap is given).

        Raises:
            StoreError: The store failed.
        """
        return await self._lookup.all_heads(cap=cap)

    async def find_session(self, given: str) -> SessionMatch:
        """Return what ``given`` names: an exact id, or the one id it is a prefix of.

        Raises:
            InvalidInputError: ``given`` is not a well-formed id (nor prefix of one).
            StoreError: The store failed.
        """
        return await self._lookup.find_session(given)


__all__ = ["LedgerReads"]
