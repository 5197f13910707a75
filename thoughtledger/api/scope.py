"""The one door: the ledger as one principal may use it.

Every adapter that serves a principal (the MCP tools and resources, the browser view's routes and
live socket, ``serve``'s socket, the in-process tool) goes through :meth:`Ledger.as_principal`:
it passes who calls and shows the answer. The rules themselves are :mod:`thoughtledger.api.access`'s
(:func:`~thoughtledger.api.access.allowed`); this module applies them to every use case, so an
adapter never reads a session's owner or filters sessions itself.

Which session a name means is decided here too. Without a principal (stdio, the Python API, HTTP
without ``--auth``) a name is taken literally. With one, a name is the principal's own session if
it may read (for writing: write) a session of that id, and otherwise the principal's own session
under the id :func:`~thoughtledger.api.access.namespaced` derives from the name. Another
principal's session therefore answers exactly as a session that does not exist: reading it says
it is not there, and writing to it starts the caller's own session.

No method here that reads appends anything (an idle session's expiry is recorded by the next
write, see :meth:`Ledger.expire_idle`).
"""

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from thoughtledger.api.access import Action, Principal, allowed, namespaced, refusal
from thoughtledger.api.capture import CapturedSpan, CaptureReport, group_by_session
from thoughtledger.api.errors import not_found
from thoughtledger.api.figures import LedgerStats
from thoughtledger.api.history import DEFAULT_HISTORY_LIMIT, HistoryPage
from thoughtledger.api.lineage import COMPARE_THOUGHTS_MAX, ForkComparison, ForkEntry
from thoughtledger.api.listing import DEFAULT_PAGE, SessionsPage
from thoughtledger.api.recording import ThinkOutcome
from thoughtledger.api.redaction import RedactionReport
from thoughtledger.api.search import DEFAULT_SEARCH_PAGE, SearchPage
from thoughtledger.ledger.chain import VerifyReport
from thoughtledger.ledger.decide import Generated, ThinkCommand
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import StreamHead
from thoughtledger.projections.answers import JsonDict
from thoughtledger.projections.entries import Annotation
from thoughtledger.projections.loop_counts import LoopStats
from thoughtledger.projections.paging import compact_size
from thoughtledger.projections.state import SessionState
from thoughtledger.projections.usage import ModelUsage

if TYPE_CHECKING:
    from thoughtledger.api.service import Ledger
    from thoughtledger.api.session import Session

_OWNERS_HELD = 4096
"""Owners a scope remembers (a session's owner never changes): a live feed of every session
checks each session once, not each event."""


class Scope:
    """The ledger as ``principal`` may use it (``None``: the ledger's own user, allowed all).

    Made by :meth:`thoughtledger.api.Ledger.as_principal`; cheap, so an adapter makes one per
    request. Each method refuses what the principal may not do with
    :class:`~thoughtledger.api.errors.AccessDeniedError` (a role that may not act at all) or
    answers as if the session did not exist (a session the principal may not see).
    """

    def __init__(self, ledger: "Ledger", principal: Principal | None) -> None:
        self._ledger = ledger
        self.principal = principal
        self._owners: OrderedDict[str, tuple[bool, str | None]] = OrderedDict()

    # -- the rules, applied --------------------------------------------------------------------

    @property
    def owner(self) -> str | None:
        """The owner recorded on a session this principal starts (``None``: the ledger's user)."""
        return self.principal.name if self.principal is not None else None

    @property
    def sees_all(self) -> bool:
        """Whether this principal may read every session (no principal, or an auditor)."""
        return allowed(self.principal, "read_all", None)

    def require(self, action: Action, what: str) -> None:
        """Refuse an ``action`` the principal's role never allows (``what``: the act, for people).

        Raises:
            AccessDeniedError: The role does not allow it (the message names the role and the
                token that would).
        """
        if not allowed(self.principal, action, self.owner):
            raise refusal(self.principal, action, what)

    async def _owner_of(self, session_id: str) -> tuple[bool, str | None]:
        held = self._owners.get(session_id)
        if held is not None and held[0]:
            self._owners.move_to_end(session_id)
            return held
        found = await self._ledger.owner_of(session_id)
        if found[0]:  # a session that does not exist yet may start, with an owner, at any time
            self._owners[session_id] = found
            while len(self._owners) > _OWNERS_HELD:
                self._owners.popitem(last=False)
        return found

    async def sees(self, session_id: str) -> bool:
        """Whether the session ``session_id`` exists and this principal may read it.

        Raises:
            InvalidInputError: A malformed id.
            StoreError: The store failed.
        """
        exists, owner = await self._owner_of(check_id(session_id))
        return exists and allowed(self.principal, "read", owner)

    async def find(self, name: str) -> str:
        """Return the id of the session ``name`` stands for, if this principal may read it.

        Raises:
            InvalidInputError: A malformed id.
            SessionNotFoundError: No such session this principal may read (the same error,
                word for word, whether it is missing or another principal's).
            StoreError: The store failed.
        """
        name = check_id(name)
        candidates = [name]
        if self.principal is not None:
            candidates.append(namespaced(self.principal.name, name))
        for candidate in candidates:
            if await self.sees(candidate):
                return candidate
        raise not_found(name)

    async def writable(self, name: str) -> str:
        """Return the id a thought for the session named ``name`` goes to.

        The session itself if this principal may write it (or it does not exist yet and no
        principal asks); otherwise the principal's own session under the derived id.

        Raises:
            InvalidInputError: A malformed id.
            AccessDeniedError: The principal's role records nothing.
            StoreError: The store failed.
        """
        self.require("write", "record thoughts")
        name = check_id(name)
        if self.principal is None:
            return name
        exists, owner = await self._owner_of(name)
        if exists and allowed(self.principal, "write", owner):
            return name
        return namespaced(self.principal.name, name)

    # -- reading -------------------------------------------------------------------------------

    async def head(self, name: str) -> StreamHead:
        """The head of the session ``name`` stands for (see :meth:`find`).

        Raises:
            InvalidInputError: A malformed id.
            SessionNotFoundError: No such session this principal may read.
            StoreError: The store failed.
        """
        session_id = await self.find(name)
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
            await self.find(name), as_of_version=as_of_version, as_of_time=as_of_time
        )

    async def facts(self, name: str) -> SessionState:
        """A session's facts as recording holds them (its latest thoughts only).

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id.
            StoreError: The store failed.
        """
        session_id = await self.find(name)
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
            await self.find(name), as_of_version=as_of_version, as_of_time=as_of_time
        )

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
            await self.find(name),
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
        return await self._ledger.verify(await self.find(name))

    async def stream(self, name: str) -> list[RecordedEvent]:
        """A session's events as stored, unfolded (its page in the browser view folds them).

        Raises:
            SessionNotFoundError: No such session this principal may read.
            InvalidInputError: A malformed id.
            StoreError: The store failed.
        """
        session_id = await self.find(name)
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
        owner = None if self.sees_all else self.owner
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
        only = await self.find(session_id) if session_id is not None else None
        return await self._ledger.search(
            query,
            principal=self.principal,
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
        session_id = await self.find(name)
        return await self._ledger.lineage.forks(session_id, principal=self.principal, limit=limit)

    async def compare(self, name: str, *, limit: int = COMPARE_THOUGHTS_MAX) -> ForkComparison:
        """A fork beside its source, as this principal may see them.

        Raises:
            SessionNotFoundError: No such fork this principal may read.
            InvalidInputError: A malformed id or limit, or a session that is not a fork.
            StoreError: The store failed.
        """
        fork_id = await self.find(name)
        return await self._ledger.lineage.compare(fork_id, principal=self.principal, limit=limit)

    @property
    def _only_owner(self) -> str | None:
        # The owner whose sessions alone count for this principal (None: every session).
        return None if self.sees_all else self.owner

    async def figures(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
        client: str | None = None,
    ) -> LedgerStats:
        """Figures over the sessions this principal may read (see ``Ledger.stats``).

        Raises:
            InvalidInputError: A malformed filter.
            StoreError: The store failed.
        """
        return await self._ledger.stats.summarize(
            since=since, until=until, agent=agent, client=client, owner=self._only_owner
        )

    async def loops(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
        client: str | None = None,
    ) -> LoopStats:
        """Loops over the sessions this principal may read (see ``Statistics.loops``).

        Raises:
            EventDecodingError: A stored event cannot be decoded.
            StoreError: The store failed.
        """
        return await self._ledger.stats.loops(
            since=since, until=until, agent=agent, client=client, owner=self._only_owner
        )

    async def model_usage(
        self, *, since: datetime | None = None, until: datetime | None = None
    ) -> list[ModelUsage]:
        """Tokens, latency and cost per model, over every session: for who may read them all.

        Raises:
            AccessDeniedError: The principal may not read every session.
            StoreError: The store failed.
        """
        self.require("read_all", "read the figures of every session")
        return await self._ledger.stats.model_usage(since=since, until=until)

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
        only = await self.find(session_id) if session_id is not None else None
        events = self._ledger.subscribe(after=after, session_id=only)
        try:
            async for record in events:
                if only is not None or self.sees_all or await self.sees(record.session_id):
                    yield record
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()

    # -- writing -------------------------------------------------------------------------------

    async def think(
        self,
        session_id: str | None,
        arguments: Mapping[str, Any] | ThinkCommand,
        *,
        clear: bool = False,
        metadata: Mapping[str, str] | None = None,
        generated: Generated | None = None,
        new_run: bool = False,
    ) -> ThinkOutcome:
        """Record one thought as this principal, in an id :meth:`writable` gave.

        ``session_id`` ``None`` starts a new session. A session the principal may not write is
        answered as missing (the recorder checks the owner again, in the append's decision).

        Raises:
            AccessDeniedError: The principal's role records nothing.
            InvalidThoughtError: The arguments break a rule; nothing was appended.
            InvalidInputError: A malformed id; nothing was appended.
            StoreError: The store failed; nothing was appended.
        """
        self.require("write", "record thoughts")
        return await self._ledger.think(
            session_id,
            arguments,
            clear=clear,
            metadata=metadata,
            generated=generated,
            owner=self.owner,
            new_run=new_run,
        )

    async def think_batch(
        self,
        session_id: str | None,
        thoughts: Sequence[Mapping[str, Any] | ThinkCommand],
        *,
        metadata: Mapping[str, str] | None = None,
        new_run: bool = False,
    ) -> list[ThinkOutcome]:
        """Record several thoughts in one append, in an id :meth:`writable` gave.

        ``session_id`` ``None`` starts a new session; see ``Ledger.batches``.

        Raises:
            AccessDeniedError: The principal's role records nothing.
            InvalidBatchError: A thought breaks a rule; nothing was appended.
            InvalidInputError: A malformed id; nothing was appended.
            StoreError: The store failed; nothing was appended.
        """
        self.require("write", "record thoughts")
        return await self._ledger.batches.think(
            session_id, thoughts, metadata=metadata, owner=self.owner, new_run=new_run
        )

    async def capture(self, spans: Sequence[CapturedSpan]) -> CaptureReport:
        """Record captured reasoning as this principal: one session per conversation key.

        Each key is taken as :meth:`writable` takes a name, so another principal's
        conversation id never mixes into its session (see ``Ledger.capture``).

        Raises:
            AccessDeniedError: The principal's role records nothing; nothing was appended.
            ConcurrencyError: Other writers kept moving a session.
            StoreError: The store failed.
        """
        self.require("write", "record thoughts")
        sessions: dict[str, list[CapturedSpan]] = {}
        for key, group in group_by_session(spans).items():
            sessions.setdefault(await self.writable(key), []).extend(group)
        return await self._ledger.capture.record(sessions, owner=self.owner)

    async def fork(
        self,
        name: str,
        *,
        at_version: int | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> "Session":
        """Start a session of this principal's own that continues ``name`` at a version.

        Raises:
            AccessDeniedError: The principal's role records nothing.
            SessionNotFoundError: No such source this principal may write.
            InvalidInputError: A malformed id or version; nothing was appended.
            StoreError: The store failed; nothing was appended.
        """
        self.require("write", "fork sessions")
        source = await self.find(name)
        return await self._ledger.fork(
            source, at_version=at_version, metadata=metadata, owner=self.owner
        )

    async def annotate(
        self,
        name: str,
        thought_number: int,
        *,
        label: str,
        note: str | None = None,
        score: float | None = None,
        by: str | None = None,
    ) -> Annotation:
        """Annotate a thought of a session this principal may annotate.

        ``by`` is recorded only for the ledger's own user: a principal annotates under its name.

        Raises:
            AccessDeniedError: The principal's role annotates nothing.
            SessionNotFoundError: No such session this principal may annotate.
            InvalidInputError: A malformed argument or a thought the session does not have.
            ConcurrencyError: Other writers kept moving the session.
            StoreError: The store failed.
        """
        self.require("annotate", "annotate thoughts")
        session_id = await self.find(name)
        return await self._ledger.annotate(
            session_id,
            thought_number,
            label=label,
            note=note,
            score=score,
            by=self.owner or by,
            principal=self.principal,
        )

    async def redact(
        self,
        name: str,
        *,
        thought_number: int | None = None,
        version: int | None = None,
        reason: str,
        by: str,
    ) -> RedactionReport:
        """Remove the text of thoughts of a session this principal may redact.

        ``by`` is recorded only for the ledger's own user: a principal redacts under its name.

        Raises:
            AccessDeniedError: The principal's role redacts nothing.
            SessionNotFoundError: No such session this principal may redact.
            InvalidInputError: A malformed argument, or a thought or version the session does
                not have; nothing was written.
            IntegrityError: The session does not verify; nothing was written.
            ConcurrencyError: Other writers kept moving the session.
            StoreError: The store failed.
        """
        self.require("redact", "redact thoughts")
        session_id = await self.find(name)
        return await self._ledger.redaction.redact(
            session_id,
            thought_number=thought_number,
            version=version,
            reason=reason,
            by=self.owner or by,
            principal=self.principal,
        )


__all__ = ["Scope"]
