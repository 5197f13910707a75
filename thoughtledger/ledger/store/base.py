"""The store port: the core log every backend implements, and the whole port the ledger runs on.

:class:`EventStore` is the core: an append-only log of hash-chained sessions, read by session or
by position, and followed by subscription. What a backend offers beyond it is a capability of its
own, a protocol in the module of its job:

* :class:`~thoughtledger.ledger.store.log_tree.LogTree`: the Merkle tree over the log, and proofs
  (``store.tree``);
* :class:`~thoughtledger.ledger.store.redaction.Redacting`: removing a redacted thought's text
  (``store.redaction``);
* :class:`~thoughtledger.ledger.store.imports.Importing`: storing events recorded elsewhere
  (``store.imports``);
* :class:`~thoughtledger.ledger.store.stats_rows.Statistics`: the rows statistics are folded from
  (``store.stats``);
* :class:`~thoughtledger.ledger.store.rows.RowReads`: pages of the log's rows, undecoded
  (``store.rows``);
* :class:`~thoughtledger.ledger.store.loop_marks.LoopMarking`: the loop marks, a projection that
  follows the log with a position (``store.loop_marks``);
* :class:`~thoughtledger.ledger.store.search.Searching`: full-text search (``store.search``);
* :class:`~thoughtledger.ledger.store.owners.Owners`: the sessions one principal started
  (``store.owners``).

:class:`LedgerStore` is a core log with every capability as an attribute: what the facade runs
on, and what each backend (memory, SQLite, PostgreSQL) is. The contract suite proves the core and
every capability on each of them.
"""

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self
from uuid import UUID

from thoughtledger.ledger.chain import PreparedEvent, VerifyReport, prepare
from thoughtledger.ledger.content import same_event
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import ConcurrencyError, InvalidInputError, StoreError
from thoughtledger.ledger.events import Event, LedgerEvent
from thoughtledger.ledger.ids import check_id, new_event_id
from thoughtledger.ledger.store.checks import MAX_BATCH, check_ids
from thoughtledger.ledger.store.heads import StreamHead
from thoughtledger.ledger.store.imports import Importing
from thoughtledger.ledger.store.log_tree import LogTree
from thoughtledger.ledger.store.loop_marks import LoopMarking
from thoughtledger.ledger.store.owners import Owners
from thoughtledger.ledger.store.redaction import Redacting
from thoughtledger.ledger.store.rows import RowReads
from thoughtledger.ledger.store.search import Searching
from thoughtledger.ledger.store.stats_rows import Statistics
from thoughtledger.ledger.store.subscribe import (
    DEFAULT_PAGE,
    Signal,
    SignalWatch,
    Watch,
    check_subscription,
    follow,
)

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024
"""Largest stored payload of one event, in bytes, unless a store is opened with another limit."""

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Return the current time in UTC (the default clock of every store)."""
    return datetime.now(UTC)


class ClosedOnExit(ABC):
    """``async with x:`` returns ``x`` and awaits ``x.aclose()`` on the way out, whatever happened.

    Stores, the ledger, the model client and the stdio stream wrappers all close this way.
    """

    @abstractmethod
    async def aclose(self) -> None:
        """Release what this holds; it cannot be used afterwards."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class EventStore(ClosedOnExit):
    """The core log: append-only events, grouped in sessions (streams), each a hash chain.

    Guarantees every backend keeps (proved by ``tests/contract``):

    * an append is atomic: all of its events are stored, or none;
    * versions within a session are 1, 2, 3... with no gaps, enforced by ``expected_version``;
    * global positions only grow, and a reader of :meth:`read_all` never sees a position
      before a lower one that will still commit;
    * an append retried with the same event ids after it succeeded returns the stored events
      instead of writing them twice;
    * a session's recorded times never go backwards: an append records the clock's reading, or
      the session's last recorded time when the clock is behind it (a clock set back, or
      writers with skewed clocks sharing a database), so an export always imports;
    * a subscription (:meth:`subscribe`) yields every event after its start position once, in
      position order, then each new one as it commits, whichever store or process appended it.

    Args:
        clock: Where recorded times come from (UTC); tests pass a fixed clock.
        max_event_bytes: Largest accepted payload of one event, in bytes.
    """

    read_only: bool = False
    """Whether the store was opened for reading only (every write is refused)."""

    def __init__(
        self, *, clock: Clock = utc_now, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    ) -> None:
        self._clock = clock
        self.max_event_bytes = max_event_bytes
        self._closed = False
        # Raised after every commit of this store (and on closing), so its subscribers wake.
        self._committed = Signal()

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called (the store can no longer be used)."""
        return self._closed

    async def append(
        self,
        session_id: str,
        events: Sequence[LedgerEvent],
        *,
        expected_version: int,
        event_ids: Sequence[UUID] | None = None,
    ) -> list[RecordedEvent]:
        """Append ``events`` to ``session_id`` atomically, if it is at ``expected_version``.

        Args:
            session_id: The session to append to.
            events: The events, in order. An empty sequence is a no-op.
            expected_version: The session's current version as the caller knows it (0 = new).
            event_ids: Ids for the events; pass the same ids when retrying an append whose outcome
                is unknown, and the retry returns the stored events instead of duplicating them.
                Fresh UUIDv7 ids are minted when omitted.

        Returns:
            The recorded events, with positions, versions, times and hashes.

        Raises:
            InvalidInputError: A malformed session id, version, event, event id or oversize
                payload.
            ConcurrencyError: The session is not at ``expected_version``; nothing was written.
            StoreError: The backend failed; nothing was written.
        """
        check_id(session_id)
        if isinstance(expected_version, bool) or not isinstance(expected_version, int):
            raise InvalidInputError("expected_version must be an integer")
        if expected_version < 0:
            raise InvalidInputError(f"expected_version must be >= 0, got {expected_version}")
        events = list(events)
        if not events:
            return []
        if len(events) > MAX_BATCH:
            raise InvalidInputError(f"an append carries at most {MAX_BATCH} events")
        for event in events:
            if not isinstance(event, Event):
                raise InvalidInputError(f"not a ledger event: {type(event).__name__}")
        explicit_ids = event_ids is not None
        ids = check_ids(event_ids, len(events)) if event_ids is not None else None
        prepared = prepare(events, max_event_bytes=self.max_event_bytes)
        if ids is None:
            ids = [new_event_id() for _ in prepared]
        try:
            return await self._append(session_id, prepared, expected_version, ids)
        except ConcurrencyError:
            if explicit_ids:
                stored = await self._already_stored(session_id, prepared, expected_version, ids)
                if stored is not None:
                    return stored
            raise

    async def _already_stored(
        self,
        session_id: str,
        prepared: Sequence[PreparedEvent],
        expected_version: int,
        ids: Sequence[UUID],
    ) -> list[RecordedEvent] | None:
        """Return the stored events when this exact append already succeeded, else ``None``."""
        stored = await self.read_stream(
            session_id, after_version=expected_version, to_version=expected_version + len(ids)
        )
        if len(stored) != len(ids):
            return None
        for record, item, event_id in zip(stored, prepared, ids, strict=True):
            if (record.event_id, record.event_type) != (event_id, item.event_type):
                return None
            if not same_event(record.payload, item.payload):  # a thought's salt is fresh each time
                return None
        return stored

    def subscribe(
        self,
        *,
        after: int = 0,
        session_id: str | None = None,
        page: int = DEFAULT_PAGE,
        poll_interval: float | None = None,
    ) -> AsyncIterator[RecordedEvent]:
        """Iterate over every event after position ``after``, then over each new one as it commits.

        Catch-up and live are one loop of reads (see :mod:`thoughtledger.ledger.store.subscribe`):
        events come in position order with no gap and no duplicate, whichever process appended them.
        The iteration ends when the store is closed; breaking out of it earlier, cancelling its task
        or closing it releases what it holds (a listening connection on PostgreSQL).

        Args:
            after: The last position already seen (0: from the beginning).
            session_id: Only this session's events.
            page: Events read per round trip while catching up.
            poll_interval: Seconds between checks for commits by other processes (SQLite) or
                between safety re-reads (PostgreSQL, where NOTIFY wakes subscribers at once);
                ``None``: the backend's default.

        Raises:
            InvalidInputError: A negative position, a malformed session id, a page below 1 or
                an interval that is not a positive number (raised here, before iterating).
            StoreError: The store is closed (raised here); (while iterating) the backend failed.
            EventDecodingError: (while iterating) a stored event cannot be decoded.
        """
        check_subscription(after, page, poll_interval)
        if self._closed:
            raise StoreError("the store is closed")
        if session_id is not None:
            check_id(session_id)
        return follow(
            self, self._watch(poll_interval), after=after, session_id=session_id, page=page
        )

    def _watch(self, poll_interval: float | None) -> AbstractAsyncContextManager[Watch]:
        """Return how a subscription of this backend hears of commits (see :class:`Watch`).

        This default hears only this store's own commits (and re-reads every ``poll_interval``
        seconds when one is given): right for memory, where no other process writes. A backend
        whose storage other processes share overrides it.
        """
        return SignalWatch(self._committed, poll_interval)

    async def version_at(self, session_id: str, position: int) -> int:
        """Return the last version of ``session_id`` at a position up to ``position`` (0: none).

        Where a subscription to one session starts reading it by version. This default reads
        the whole session; the backends answer it from an index.

        Raises:
            StoreError: The backend failed.
        """
        version = 0
        for record in await self.read_stream(session_id):
            if record.position > position:
                break
            version = record.version
        return version

    def _now(self) -> datetime:
        return self._clock()

    def _record_time(self, head_time: datetime | None) -> datetime:
        """The time an append onto a head recorded at ``head_time`` records (``None``: new).

        The clock's reading, or the head's time when the clock is behind it: the hash covers the
        time, so it is chosen here, before sealing, and a session's times never go backwards.
        """
        now = self._clock()
        return head_time if head_time is not None and head_time > now else now

    def holds_file(self, path: Path) -> bool:
        """Whether ``path`` is one of the files this store keeps the ledger in.

        A writer of files (an export) asks this so as never to write over the ledger itself. A
        store whose data lives in no file of this machine holds none.

        Raises:
            OSError: The path cannot be resolved.
        """
        return False

    @abstractmethod
    async def _append(
        self,
        session_id: str,
        prepared: Sequence[PreparedEvent],
        expected_version: int,
        ids: Sequence[UUID],
    ) -> list[RecordedEvent]:
        """Seal and store validated events atomically (see :meth:`append`).

        Nothing derived from the log (loop marks, the Merkle tree; on SQLite the search index
        but for a batch every :data:`~thoughtledger.ledger.store.sqlite.search_follow.INDEX_LAG`
        events) is written here: each follows the log on its own.
        """

    @abstractmethod
    async def read_stream(
        self,
        session_id: str,
        *,
        after_version: int = 0,
        to_version: int | None = None,
        limit: int | None = None,
    ) -> list[RecordedEvent]:
        """Return a session's events with ``after_version < version <= to_version``, in order.

        A long session is read in pages by keyset: pass the last version of one page as the
        next page's ``after_version`` (an indexed range on ``(session_id, version)``, never an
        offset, so every page costs the same wherever it starts).

        Args:
            session_id: The session to read.
            after_version: Exclusive lower bound (0 reads from the first event).
            to_version: Inclusive upper bound; ``None`` reads to the end.
            limit: At most this many events, the first of the window (``None``: all of them).

        Returns:
            The events in version order; empty for an unknown session.

        Raises:
            InvalidInputError: A malformed session id, window or limit.
            EventDecodingError: A stored event cannot be decoded.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """Return up to ``limit`` events of every session with ``position > after_position``.

        Events come in position order. On every backend a reader that pages with the last
        position it saw never skips an event that commits later.

        Raises:
            InvalidInputError: A negative position or a limit below 1.
            EventDecodingError: A stored event cannot be decoded.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def stream_head(self, session_id: str) -> StreamHead | None:
        """Return the head of ``session_id``, or ``None`` when it has no events.

        Raises:
            InvalidInputError: A malformed session id.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def list_heads(
        self, *, after_session_id: str | None = None, limit: int = 1000
    ) -> list[StreamHead]:
        """Return session heads ordered by session id, paging after ``after_session_id``.

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def recent_heads(
        self, *, before: tuple[datetime, str] | None = None, limit: int = 100
    ) -> list[StreamHead]:
        """Return session heads newest first (by start time, then id), paging before a key.

        One principal's sessions alone are :attr:`LedgerStore.owners`' to list.

        Args:
            before: The ``(started_at, session_id)`` of the last head of the previous page.
            limit: The most heads to return.

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def fork_heads(self, session_id: str) -> list[StreamHead]:
        """Return the heads of the sessions forked from ``session_id``, oldest first.

        A fork is a fact of its first event (``session.started``'s ``fork_of``), indexed where
        it is written, so the source's forks are found without a scan.

        Raises:
            InvalidInputError: A malformed session id.
            StoreError: The backend failed.
        """

    async def recorded_heads(self) -> dict[str, tuple[int, str]]:
        """The heads kept beside the log that verification compares it with: version and hash.

        A session's head is its last event. The SQL backends kept a head row per session until
        schema step 19, which kept only the rows that disagreed with the log (a tail cut before
        the upgrade: the only evidence of it); an older ledger opened read-only still has one
        per session. Normally empty; the memory store keeps none.

        Raises:
            StoreError: The backend failed.
        """
        return {}

    @abstractmethod
    async def verify(self, session_id: str) -> VerifyReport:
        """Walk the hash chain of ``session_id`` from its stored columns, trusting nothing decoded.

        The walk's end is compared with the session's head kept beside the log, if there is
        one (see :meth:`recorded_heads`); a session's head is otherwise its last event, so a
        cut tail leaves a chain that verifies (a signed checkpoint catches it).

        Returns:
            A report that is ``ok`` or names the first bad event.

        Raises:
            InvalidInputError: A malformed session id.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def aclose(self) -> None:
        """Release connections and files. The store cannot be used afterwards."""


class LedgerStore(EventStore):
    """A core log with every capability: what the ledger runs on, and what each backend is.

    It adds no behaviour: each backend implements every capability itself (from parts of its
    own and the shared rules beside each protocol), and ``tests/contract`` proves them. Each
    capability is an object of its own, reached as an attribute: the backend carries none of
    its methods, and each part of the facade takes only the capabilities it uses.
    """

    search: Searching
    """Full-text search over every session's thoughts (see :class:`Searching`)."""
    tree: LogTree
    """The Merkle tree over the log, and its proofs (see :class:`LogTree`)."""
    stats: Statistics
    """The rows the ledger's statistics are folded from (see :class:`Statistics`)."""
    redaction: Redacting
    """The removal of redacted texts (see :class:`Redacting`)."""
    imports: Importing
    """Storing events recorded elsewhere (see :class:`Importing`)."""
    rows: RowReads
    """Pages of the log's rows, undecoded (see :class:`RowReads`)."""
    loop_marks: LoopMarking
    """The loop marks, following the log with a position (see :class:`LoopMarking`)."""
    owners: Owners
    """The sessions one principal started, newest first (see :class:`Owners`)."""
    stored_schema_version: int | None = None
    """The database schema version the ledger holds, as opened: this release's once opened for
    writing (opening upgrades it), an older one a read-only opening left as it was; ``None``
    for a store with no database (memory)."""


__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "MAX_BATCH",
    "Clock",
    "ClosedOnExit",
    "EventStore",
    "LedgerStore",
    "StreamHead",
    "utc_now",
]
