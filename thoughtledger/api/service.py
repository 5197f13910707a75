"""The async facade: load a session, replay it, decide, append, answer with a view.

No SQL, no MCP, no argument parsing lives here: only the use-cases over the store and projections.
"""

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from thoughtledger.api.access import Principal, owner_guard
from thoughtledger.api.annotation import Annotations
from thoughtledger.api.batching import Batches
from thoughtledger.api.caches import Heads, Held, Histories
from thoughtledger.api.capture import Capturing
from thoughtledger.api.figures import Statistics
from thoughtledger.api.forking import Forking
from thoughtledger.api.history import HistoryPage, Paging
from thoughtledger.api.lineage import Lineage
from thoughtledger.api.listing import Listing
from thoughtledger.api.lookup import Lookup
from thoughtledger.api.loop_follow import Loops
from thoughtledger.api.part_method import PartMethod
from thoughtledger.api.proofs import Proofs
from thoughtledger.api.reading import Reads
from thoughtledger.api.recording import Recorder, ThinkOutcome
from thoughtledger.api.redaction import Redaction
from thoughtledger.api.scope import Scope
from thoughtledger.api.search import Searcher
from thoughtledger.api.session import Profile, Session
from thoughtledger.api.transfer import Transfer
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
from thoughtledger.projections.entries import Annotation

DEFAULT_TTL = timedelta(minutes=30)
"""Idle time after which a session expires (the session pattern's default)."""


class Ledger(ClosedOnExit):
    """Sequential thinking over an event store: sessions, thoughts, views and time travel.

    The ledger records thoughts and reads sessions back itself, each method carried out by one
    of the parts it holds over the same store (reads, history pages, listing, look-ups, search,
    forking); components reached from it, over the same store, do the rest: ``ledger.proofs``
    (checkpoints and proofs), ``ledger.transfer`` (export and import), ``ledger.redaction``
    (erasing thoughts' text) and ``ledger.stats`` (figures). ``async with ledger:`` closes it on
    the way out.

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
        follow_log: Keep the loop marks following the log in the background (see
            :mod:`thoughtledger.api.loop_follow`): what :func:`thoughtledger.open_ledger` does,
            since it owns the event loop's lifetime of the ledger. ``False`` (a ledger made
            over a store directly): they move only on :meth:`mark_loops`, and every read folds
            what they lack; no task of the ledger's outlives a call.
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
        follow_log: bool = False,
    ) -> None:
        self._store = store
        self.ttl = ttl
        self.max_thought_bytes = max_thought_bytes
        self._held = Held(store, Heads(cache_size, hold_thoughts), Histories(cache_thoughts))
        self._recorder = Recorder(store, self._held, ttl=ttl, clock=clock)
        self.loops = Loops(store, store.loop_marks, store.rows, follow=follow_log)
        """Loop marks: which thoughts repeat an earlier one, always complete."""
        self._recorder.observers.append(self.loops.appended)
        self._reads = Reads(store, store.rows, self._held)
        self._listing = Listing(store, store.owners, self._held)
        self._lookup = Lookup(store)
        self._paging = Paging(store, store.rows, store.redaction, self._held.known_branches)
        self._forking = Forking(store, self._held, self._recorder)
        self.proofs = Proofs(store, store.tree)
        """Signed checkpoints, inclusion and consistency proofs."""
        self.transfer = Transfer(
            store, store.rows, store.imports, store.redaction, self.loops.imported
        )
        """Export and import, and the whole log as rows."""
        self.redaction = Redaction(store, store.redaction, self)
        """Erasing thoughts' text, recorded."""
        self.stats = Statistics(store, store.stats, store.rows, store.loop_marks, self.loops)
        """Figures over the sessions, and over the models that wrote thoughts."""
        self.annotations = Annotations(store, self._recorder)
        """Reviewers' labels, scores and notes on thoughts."""
        self._searcher = Searcher(store.search)
        self.lineage = Lineage(store, self._held)
        """A session's forks as a principal may see them, and a fork beside its source."""
        self.batches = Batches(self._held, self._recorder, lambda: self.max_thought_bytes)
        """Several thoughts recorded at once, in one append."""
        self.capture = Capturing(
            self._held,
            self._recorder,
            store.imports.recorded_event_ids,
            lambda: self.max_thought_bytes,
        )
        """Reasoning captured from agents' telemetry, recorded as thoughts and actions."""

    # -- reading sessions back (each carried out by a part: reading.py, history.py, ...) ------

    state = PartMethod("_reads", Reads.state)
    state_with_latest = PartMethod("_reads", Reads.state_with_latest)
    events = PartMethod("_reads", Reads.events)
    actions = PartMethod("_reads", Reads.actions)
    replay = PartMethod("_reads", Reads.replay)
    subscribe = PartMethod("_reads", Reads.subscribe)
    rebuild = PartMethod("_reads", Reads.rebuild)
    history = PartMethod("_paging", Paging.history)
    search = PartMethod("_searcher", Searcher.search)
    facts = PartMethod("_listing", Listing.facts)
    list_sessions = PartMethod("_listing", Listing.list_sessions)
    recent_sessions = PartMethod("_listing", Listing.recent_sessions)
    owner_of = PartMethod("_listing", Listing.owner_of)
    head = PartMethod("_lookup", Lookup.head)
    heads = PartMethod("_lookup", Lookup.heads)
    all_heads = PartMethod("_lookup", Lookup.all_heads)
    find_session = PartMethod("_lookup", Lookup.find_session)

    @property
    def stored_schema_version(self) -> int | None:
        """The database schema version the ledger holds, as opened.

        This release's (:func:`~thoughtledger.api.schema_version`) once opened for writing,
        which upgrades it; an older one that a read-only opening leaves as it is; ``None`` in
        memory, which has no schema.
        """
        return self._store.stored_schema_version

    async def verify(self, session_id: str) -> VerifyReport:
        """Walk a session's hash chain (see :meth:`.EventStore.verify`), and a fork's link.

        A fork fails when its source no longer holds, at the fork's version, the event hash
        its first event names.

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        return await self._forking.check_link(await self._reads.verify(session_id))

    async def verify_all(
        self, *, progress: Callable[[int, int], None] | None = None
    ) -> list[VerifyReport]:
        """Walk every session's hash chain in one pass over the log, and each fork's link.

        What :meth:`verify` says of each session, for all of them at the cost of one read of
        the log (a walk per session would query once per session). A session appended to while
        the walk runs, or whose rows the walk did not all see, is walked again alone.

        Args:
            progress: Called after each page read with the events walked and the events to walk.

        Raises:
            StoreError: The store failed.
        """
        reports, forks, moved = await self._reads.verify_all(progress=progress)
        settled = []
        for report in reports:
            if report.session_id in moved or not report.ok:
                # Not settled by the one walk, or broken in it: walked again alone, so a broken
                # session is named exactly as its own walk names it (the one walk meets rows in
                # log order, which a moved row does not keep).
                settled.append(await self.verify(report.session_id))
            elif report.session_id in forks:
                settled.append(await self._forking.check_link(report))
            else:
                settled.append(report)
        return settled

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
            session_id,
            at_version=at_version,
            metadata=metadata,
            owner=owner,
            may_read=owner_guard(owner, "read"),
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
                :mod:`thoughtledger.api.generation`).
            owner: The principal recording (see :mod:`thoughtledger.api.access`):
                recorded as the owner of a session that starts here; a session another
                principal (or nobody) owns is answered as not found. ``None``: the ledger's own
                user, who may write anywhere.
            new_run: A plain thought numbered 1 on a session that already holds thoughts starts
                a new session that records the one it follows (one session per run of an
                agent), instead of joining the old one.

        Returns:
            The outcome, with the session id the thought landed in.

        Raises:
            InvalidThoughtError: The arguments break a rule; the thought was not appended (a
                clear or expiry due before it may be stored).
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
            may_change=owner_guard(owner, "write"),
            new_run=new_run,
        )

    def as_principal(self, principal: Principal | None) -> Scope:
        """The ledger as ``principal`` may use it: the one door every adapter goes through.

        Args:
            principal: Who calls (``None``: the ledger's own user, allowed everything).

        Returns:
            A view whose every read, write, search, fork, annotation and subscription applies
            the rules of :mod:`thoughtledger.api.access` (see :class:`thoughtledger.api.Scope`).
        """
        return Scope(self, principal)

    async def expire_idle(self, session_id: str) -> bool:
        """Record an open session found idle past the TTL as expired: an explicit write.

        Reading never records an expiry; the next thought for an idle session does (it starts a
        fresh session), and so does this.

        Returns:
            Whether the session has events at all.

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed (or is read-only).
        """
        return await self._recorder.expire_if_idle(check_id(session_id))

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
        """Bring the stored loop marks up to the log's end now; how many events were taken in.

        They follow the log on their own, in the background (see
        :mod:`thoughtledger.api.loop_follow`), and every read folds what they lack: this is
        for a caller that wants ``tl_session_loops`` current for its own SQL at once.

        Raises:
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed (or is read-only).
        """
        return await self.loops.catch_up()

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

    # -- observing and closing ------------------------------------------------------------------

    def observe(self, observer: Callable[[list[RecordedEvent]], None]) -> None:
        """Call ``observer`` with the events of each append through this ledger, once stored.

        It runs on the appending task, right after the commit: it must be quick and must not
        raise (a telemetry stream only queues them, see :mod:`thoughtledger.adapters.otel.live`).
        """
        self._recorder.observers.append(observer)

    async def aclose(self) -> None:
        """Stop following the log (what this ledger appended is taken in first); close the store."""
        try:
            await self.loops.aclose()
        finally:
            await self._store.aclose()


__all__ = ["DEFAULT_TTL", "HistoryPage", "Ledger", "Profile", "ThinkOutcome"]
