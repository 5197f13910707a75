"""The async facade: load a session, replay it, decide, append, answer with a view.

No SQL, no MCP, no argument parsing lives here: only the use-cases over the store and projections.
"""

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from thoughtledger.api.facade.access import Principal
from thoughtledger.api.facade.annotation import Annotations
from thoughtledger.api.facade.batching import Batches
from thoughtledger.api.facade.caches import Heads, Held, Histories
from thoughtledger.api.facade.figures import Statistics
from thoughtledger.api.facade.forking import Forking
from thoughtledger.api.facade.history import DEFAULT_HISTORY_LIMIT, HistoryPage, Paging
from thoughtledger.api.facade.lineage import Lineage
from thoughtledger.api.facade.listing import DEFAULT_PAGE, Listing, SessionsPage
from thoughtledger.api.facade.lookup import Lookup, SessionMatch
from thoughtledger.api.facade.proofs import Proofs
from thoughtledger.api.facade.reading import Reads
from thoughtledger.api.facade.recording import Recorder, ThinkOutcome
from thoughtledger.api.facade.redaction import Redaction
from thoughtledger.api.facade.search import DEFAULT_SEARCH_PAGE, Searcher, SearchPage
from thoughtledger.api.facade.session import Profile, Session
from thoughtledger.api.facade.transfer import Transfer
from thoughtledger.ledger.chain import VerifyReport
from thoughtledger.ledger.decide import (
    DEFAULT_MAX_THOUGHT_BYTES,
    Generated,
    ThinkCommand,
    parse_command,
)
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import ThoughtRedacted
from thoughtledger.ledger.ids import check_id, new_session_id
from thoughtledger.ledger.store.base import ClosedOnExit, LedgerStore, StreamHead, utc_now
from thoughtledger.projections.answers import JsonDict
from thoughtledger.projections.entries import Annotation
from thoughtledger.projections.paging import compact_size
from thoughtledger.projections.state import SessionState

DEFAULT_TTL = timedelta(minutes=30)
"""Idle time after which a session expires (the session pattern's default)."""


class Ledger(ClosedOnExit):
    """Sequential thinking over an event store: sessions, thoughts, views and time travel.

    The ledger records thoughts and reads sessions back itself; components reached from it,
    over the same store, do the rest: ``ledger.proofs`` (checkpoints and proofs),
    ``ledger.transfer`` (export and import), ``ledger.redaction`` (erasing thoughts' text) and
    ``ledger.stats`` (figures). ``async with ledger:`` closes it on the way out.

    Args:
        store: Where events live; the ledger owns it, closes it in :meth:`aclose`, and is the
            only door to it (through its methods and its components).
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
        store: LedgerStore,
        *,
        ttl: timedelta | None = DEFAULT_TTL,
        clock: Callable[[], datetime] = utc_now,
        max_thought_bytes: int = DEFAULT_MAX_THOUGHT_BYTES,
        cache_size: int = 1024,
        hold_thoughts: int = 64,
        cache_thoughts: int = 32_768,
    ) -> None:
        self._store = store
        self.ttl = ttl
        self.max_thought_bytes = max_thought_bytes
        self._held = Held(store, Heads(cache_size, hold_thoughts), Histories(cache_thoughts))
        self._recorder = Recorder(store, self._held, ttl=ttl, clock=clock)
        self._reads = Reads(store, self._held)
        self._listing = Listing(store, self._held)
        self._lookup = Lookup(store)
        self._paging = Paging(store, self._held.known_branches)
        self._forking = Forking(store, self._held, self._recorder)
        self.proofs = Proofs(store)
        """Signed checkpoints, inclusion and consistency proofs."""
        self.transfer = Transfer(store, self.mark_loops)
        """Export and import, and the whole log as rows."""
        self.redaction = Redaction(store, self)
        """Erasing thoughts' text, recorded."""
        self.stats = Statistics(store)
        """Figures over the sessions, and over the models that wrote thoughts."""
        self.annotations = Annotations(store, self._recorder)
        """Reviewers' labels, scores and notes on thoughts."""
        self._searcher = Searcher(store)
        self.lineage = Lineage(store, self._held)
        """A session's forks as a principal may see them, and a fork beside its source."""
        self.batches = Batches(self._held, self._recorder, lambda: self.max_thought_bytes)
        """Several thoughts recorded at once, in one append."""

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

    async def fork(
        self,
        session_id: str,
        *,
        at_version: int | None = None,
        metadata: Mapping[str, str] | None = None,
        owner: str | None = None,
    ) -> Session:
        """Start a new session that continues ``session_id`` as it was at ``at_version``.

        The fork's first event names its source, the version and the source's event hash
        there (which :meth:`verify` checks); its state is the source's as of that version, then
        its own thoughts. Nothing is copied. Continue it like any session, by its id.

        Args:
            session_id: The source.
            at_version: The source's version to start from (its events ``1..at_version``);
                ``None``: its current version.
            metadata: Facts to record on the fork (``client``, ``agent``...).
            owner: The principal forking, recorded as the fork's owner; it must own the source
                (``None``: the ledger's own user, who may fork any session).

        Returns:
            A handle on the fork (its ``id`` is new).

        Raises:
            InvalidInputError: A malformed id, or a version the source does not have; nothing
                was appended.
            SessionNotFoundError: No such source, or ``owner`` does not own it; nothing was
                appended.
            StoreError: The store failed; nothing was appended.
        """
        state = await self._forking.fork(
            session_id, at_version=at_version, metadata=metadata, owner=owner
        )
        return Session(self, state.session_id, metadata)

    async def forks(self, session_id: str) -> list[StreamHead]:
        """The heads of the sessions forked from ``session_id``, oldest first (not their forks).

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        return await self._store.fork_heads(check_id(session_id))

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
                :mod:`thoughtledger.api.facade.generation`).
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
        current = check_id(session_id) if session_id is not None else None
        return await self._recorder.think(
            current,
            command,
            clear=clear,
            metadata=metadata,
            generated=generated,
            owner=owner,
            new_run=new_run,
        )

    async def get_session(self, session_id: str) -> SessionState | None:
        """Return a session's current state, or ``None`` when it has no events.

        An open session found idle past the TTL is recorded as expired now.

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        if not await self._recorder.expire_if_idle(check_id(session_id)):
            return None
        return await self._held.complete(session_id)

    async def clear_session(self, session_id: str, *, reason: str | None = None) -> bool:
        """Retire a session: append a cleared event (its history stays in the log).

        Returns:
            True when the session was open and is now cleared; False when there was nothing to
            clear (unknown, already cleared or expired).

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        return await self._recorder.clear(check_id(session_id), reason)

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

    async def mark_loops(self) -> int:
        """Store the loop marks of every session listed as behind on them; how many were marked.

        A session is behind when thoughts reached it without their marks: an import, a
        redaction, a write through the store alone, or (once) a ledger from before marks were
        stored. Opening a ledger for writing, redacting and importing run this; until it has
        run, the ``tl_session_loops`` view says so and ``stats`` folds such sessions itself.

        Raises:
            StoreError: The store failed (or is read-only).
        """
        return await self._recorder.loops.refresh()

    async def append_redactions(
        self, session_id: str, redactions: Sequence[ThoughtRedacted], *, expected_version: int
    ) -> list[RecordedEvent]:
        """Append ``thought.redacted`` events, recorded as any event (what redaction records).

        Through the path every append takes: the held head moves and observers hear of them.
        Only redaction events are taken: nothing else bypasses the rules of a thought.

        Raises:
            InvalidInputError: A malformed id, or an event that is not a redaction.
            ConcurrencyError: The session is no longer at ``expected_version``.
            StoreError: The store failed (or is read-only).
        """
        if not all(isinstance(event, ThoughtRedacted) for event in redactions):
            raise InvalidInputError("only thought.redacted events are appended this way")
        return await self._recorder.append_at(
            check_id(session_id), list(redactions), expected_version=expected_version
        )

    async def annotate(
        self,
        session_id: str,
        thought_number: int,
        *,
        label: str,
        note: str | None = None,
        score: float | None = None,
        by: str | None = None,
        principal: Principal | None = None,
    ) -> Annotation:
        """Annotate a thought: see :meth:`thoughtledger.api.Annotations.annotate`.

        Raises:
            InvalidInputError: A malformed argument or a thought the session does not have.
            SessionNotFoundError: No such session, or ``principal`` may not annotate it.
            ConcurrencyError: Other writers kept moving the session.
            StoreError: The store failed (or is read-only).
        """
        return await self.annotations.annotate(
            session_id,
            thought_number,
            label=label,
            note=note,
            score=score,
            by=by,
            principal=principal,
        )

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
        state, _latest = await self._reads.state_with_latest(
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
        """Walk a session's hash chain (see :meth:`EventStore.verify`), and a fork's link.

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

    # -- observing and closing ------------------------------------------------------------------

    def observe(self, observer: Callable[[list[RecordedEvent]], None]) -> None:
        """Call ``observer`` with the events of each append through this ledger, once stored.

        It runs on the appending task, right after the commit: it must be quick and must not
        raise (a telemetry stream only queues them, see :mod:`thoughtledger.api.otel.live`).
        """
        self._recorder.observers.append(observer)

    async def aclose(self) -> None:
        """Close the store."""
        await self._store.aclose()


__all__ = ["DEFAULT_TTL", "HistoryPage", "Ledger", "Profile", "ThinkOutcome"]
