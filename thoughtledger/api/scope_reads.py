"""What a principal reads through its scope: sessions, their pages, searches and the live log.

Each read finds the session a name stands for with :meth:`~thoughtledger.api.Scope.find` (another
principal's session answers as one that does not exist) and reads it through the ledger. No read
appends anything.
"""

import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import TYPE_CHECKING

from thoughtledger.api.errors import not_found
from thoughtledger.api.history import DEFAULT_HISTORY_LIMIT, HistoryPage
from thoughtledger.api.lineage import COMPARE_THOUGHTS_MAX, ForkComparison, ForkEntry
from thoughtledger.api.listing import DEFAULT_PAGE, SessionsPage
from thoughtledger.api.scope_rules import ScopeRules
from thoughtledger.api.search import DEFAULT_SEARCH_PAGE, SearchPage
from thoughtledger.ledger.chain import VerifyReport
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.store.base import StreamHead
from thoughtledger.projections.actions import ActionEntry
from thoughtledger.projections.answers import JsonDict
from thoughtledger.projections.entries import ForkPoint
from thoughtledger.projections.paging import compact_size
from thoughtledger.projections.state import SessionState

if TYPE_CHECKING:
    from thoughtledger.api.service import Ledger


class ScopedReads:
    """The reads of a :class:`~thoughtledger.api.Scope`.

    Args:
        ledger: What is read.
        rules: The access rules applied to the scope's principal.
    """

    def __init__(self, ledger: "Ledger", rules: ScopeRules) -> None:
        self._ledger = ledger
        self._rules = rules

    async def head(self, name: str) -> StreamHead:
        """The head of the session ``name`` stands for (see :meth:`Scope.find`).

        Raises:
            InvalidInputError: A malformed id.
            SessionNotFoundError: No such session this principal may read.
            StoreError: The store failed.
        """
        session_id = await self._rules.find(name)
        head = await self._ledger.head(session_id)
        if head is None:  # pragma: no cover - found above; a session never loses its events
            raise not_found(name)
        return head

    async def state(
        self,
        name: str,
        *,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> SessionState:
        """A session's state now, or as of a version or a time (see ``Ledger.state``).

        Raises:
            SessionNotFoundError: No such session this principal may read (or none at that
                time).
            InvalidInputError: A malformed id, both bounds given, or a bound out of range.
            StoreError: The store failed.
        """
        return await self._ledger.state(
            await self._rules.find(name), as_of_version=as_of_version, as_of_time=as_of_time
        )

    async def facts(self, name: str) -> SessionState:
        """A session's facts as recording holds them (its latest thoughts only).

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id.
            StoreError: The store failed.
        """
        session_id = await self._rules.find(name)
        facts = await self._ledger.facts(session_id)
        if facts is None:  # pragma: no cover - found above
            raise not_found(name)
        return facts

    async def events(
        self,
        name: str,
        *,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> list[RecordedEvent]:
        """A session's events, all or up to a version or a time.

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id or bound.
            StoreError: The store failed.
        """
        return await self._ledger.events(
            await self._rules.find(name), as_of_version=as_of_version, as_of_time=as_of_time
        )

    async def actions(self, name: str, *, as_of_version: int | None = None) -> list[ActionEntry]:
        """The actions an agent took in a session, all or up to a version (``Ledger.actions``).

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id, or a version out of range.
            StoreError: The store failed.
        """
        return await self._ledger.actions(await self._rules.find(name), as_of_version=as_of_version)

    async def history(
        self,
        name: str,
        *,
        limit: int = DEFAULT_HISTORY_LIMIT,
        after: str | None = None,
        branch: str | None = None,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
        max_bytes: int | None = None,
        size_of: Callable[[JsonDict], int] = compact_size,
    ) -> HistoryPage:
        """One page of a session's thoughts (see ``Ledger.history``).

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id, limit, bound or cursor, or an unknown branch.
            StoreError: The store failed.
        """
        return await self._ledger.history(
            await self._rules.find(name),
            limit=limit,
            after=after,
            branch=branch,
            as_of_version=as_of_version,
            as_of_time=as_of_time,
            max_bytes=max_bytes,
            size_of=size_of,
        )

    async def verify(self, name: str) -> VerifyReport:
        """Walk a session's hash chain (see ``Ledger.verify``).

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id.
            StoreError: The store failed.
        """
        return await self._ledger.verify(await self._rules.find(name))

    async def stream(self, name: str) -> list[RecordedEvent]:
        """A session's events as stored, unfolded (its page in the browser view folds them).

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id.
            StoreError: The store failed.
        """
        session_id = await self._rules.find(name)
        exported = self._ledger.transfer.export([session_id])
        async with contextlib.aclosing(exported) as sessions:
            return [record async for batch in sessions for record in batch]

    async def sessions(
        self, *, limit: int = DEFAULT_PAGE, cursor: str | None = None
    ) -> SessionsPage:
        """A page of the sessions this principal may read, newest first.

        Raises:
            InvalidInputError: A limit out of range or a cursor no listing gave.
            StoreError: The store failed.
        """
        owner = None if self._rules.sees_all else self._rules.owner
        return await self._ledger.recent_sessions(limit=limit, cursor=cursor, owner=owner)

    async def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        agent: str | None = None,
        client: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = DEFAULT_SEARCH_PAGE,
        cursor: str | None = None,
    ) -> SearchPage:
        """Find thoughts of the sessions this principal may read (see ``Ledger.search``).

        Raises:
            InvalidInputError: A query with no word to find, a bad page size, cursor or id.
            SessionNotFoundError: ``session_id`` is not a session this principal may read.
            StoreError: The store failed.
        """
        only = await self._rules.find(session_id) if session_id is not None else None
        return await self._ledger.search(
            query,
            principal=self._rules.principal,
            session_id=only,
            agent=agent,
            client=client,
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
        )

    async def forks(self, name: str, *, limit: int | None = None) -> list[ForkEntry]:
        """The forks of a session that this principal may read, oldest first.

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id or limit.
            StoreError: The store failed.
        """
        session_id = await self._rules.find(name)
        return await self._ledger.lineage.forks(
            session_id, principal=self._rules.principal, limit=limit
        )

    async def fork_point(self, name: str) -> ForkPoint | None:
        """Where a fork starts from, ``None`` for a session that is no fork (one point read).

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id.
            StoreError: The store failed.
        """
        return await self._ledger.lineage.fork_point(await self._rules.find(name))

    async def compare(self, name: str, *, limit: int = COMPARE_THOUGHTS_MAX) -> ForkComparison:
        """A fork beside its source, as this principal may see them.

        Raises:
            SessionNotFoundError: No such fork this principal may read.
            InvalidInputError: A malformed id or limit, or a session that is not a fork.
            StoreError: The store failed.
        """
        fork_id = await self._rules.find(name)
        return await self._ledger.lineage.compare(
            fork_id, principal=self._rules.principal, limit=limit
        )

    async def subscribe(
        self, *, after: int = 0, session_id: str | None = None
    ) -> AsyncIterator[RecordedEvent]:
        """Every event after ``after``, then each as it commits, of the sessions it may read.

        ``session_id``: of that session only. Each session's owner is read once.

        Raises:
            SessionNotFoundError: ``session_id`` is not a session this principal may read.
            InvalidInputError: A negative position or a malformed id.
            StoreError: The store failed.
        """
        rules = self._rules
        only = await rules.find(session_id) if session_id is not None else None
        events = self._ledger.subscribe(after=after, session_id=only)
        try:
            async for record in events:
                if (
                    only is not None
                    or self._rules.sees_all
                    or await self._rules.sees(record.session_id)
                ):
                    yield record
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()


__all__ = ["ScopedReads"]
