"""The in-memory backend: the reference implementation of the contract, for tests and scratch."""

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from datetime import datetime
from uuid import UUID

from thoughtledger.ledger.chain import (
    GENESIS_HASH,
    PreparedEvent,
    StoredRow,
    VerifyReport,
    seal,
    verify_rows,
)
from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import ConcurrencyError, InvalidInputError, StoreError
from thoughtledger.ledger.events import SessionStarted
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.merkle import NodeId
from thoughtledger.ledger.store.base import (
    DEFAULT_MAX_EVENT_BYTES,
    Clock,
    LedgerStore,
    StreamHead,
    utc_now,
)
from thoughtledger.ledger.store.checks import check_page, check_window
from thoughtledger.ledger.store.imports import StoreImports, plan_import
from thoughtledger.ledger.store.log_tree import (
    BLOCK_LEVEL,
    PAGE,
    StoredNode,
    TreeTip,
)
from thoughtledger.ledger.store.loop_marks import (
    FoldedMarks,
    HeldLoopMarks,
    LoopCounts,
    LoopMark,
    LoopMarking,
    check_folded,
)
from thoughtledger.ledger.store.owners import Owners
from thoughtledger.ledger.store.redaction import LogRedaction, Stripping
from thoughtledger.ledger.store.rows import RecordsRows, to_recorded
from thoughtledger.ledger.store.search import RecordsSearch
from thoughtledger.ledger.store.stats_rows import StatsFilter, StreamsStats
from thoughtledger.ledger.store.stored_tree import StoredTree


class MemoryEventStore(LedgerStore):
    """Keeps the log in process memory; nothing survives the process.

    Appends run without awaiting, so each one is atomic with respect to other tasks.
    """

    def __init__(
        self, *, clock: Clock = utc_now, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    ) -> None:
        super().__init__(clock=clock, max_event_bytes=max_event_bytes)
        self._log: list[RecordedEvent] = []
        self._streams: dict[str, list[RecordedEvent]] = {}
        self._event_ids: set[UUID] = set()
        self._closed = False
        self.tree = StoredTree(_MemoryTree(self._log, self._check_open))
        self.search = RecordsSearch(self._streams, self._check_open)
        self.stats = StreamsStats(self._streams, self._check_open)
        self.owners = _MemoryOwners(self._streams, self._check_open)
        self.redaction = LogRedaction(self.read_stream, self._strip)
        self.rows = RecordsRows(self.read_all, self.read_stream)
        self.loop_marks = _MemoryLoopMarks(self._log, self.stats, self._check_open)
        self.imports = StoreImports(
            self, self._import, self._recorded_event_ids, max_event_bytes=max_event_bytes
        )

    async def _append(
        self,
        session_id: str,
        prepared: Sequence[PreparedEvent],
        expected_version: int,
        ids: Sequence[UUID],
    ) -> list[RecordedEvent]:
        self._check_open()
        stream = self._streams.get(session_id, [])
        if len(stream) != expected_version:
            raise ConcurrencyError(session_id, expected_version, len(stream))
        reused = self._event_ids.intersection(ids)
        if reused:
            raise InvalidInputError(f"event id {min(reused)} is already recorded")
        head_hash = stream[-1].hash if stream else GENESIS_HASH
        sealed = seal(
            session_id,
            prepared,
            version=expected_version,
            head_hash=head_hash,
            event_ids=ids,
            recorded_at=self._record_time(stream[-1].recorded_at if stream else None),
        )
        recorded = to_recorded(sealed, len(self._log) + 1)
        self._log.extend(recorded)
        self._streams.setdefault(session_id, []).extend(recorded)
        self._event_ids.update(ids)
        self._committed.notify()
        return recorded

    async def version_at(self, session_id: str, position: int) -> int:
        """See :meth:`.EventStore.version_at`."""
        self._check_open()
        stream = self._streams.get(session_id, [])
        return sum(1 for record in stream if record.position <= position)

    async def read_stream(
        self,
        session_id: str,
        *,
        after_version: int = 0,
        to_version: int | None = None,
        limit: int | None = None,
    ) -> list[RecordedEvent]:
        """See :meth:`.EventStore.read_stream`."""
        check_id(session_id)
        check_window(after_version, to_version, limit)
        self._check_open()
        stream = self._streams.get(session_id, [])
        end = len(stream) if to_version is None else min(to_version, len(stream))
        if limit is not None:
            end = min(end, after_version + limit)
        return stream[after_version:end]

    async def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """See :meth:`.EventStore.read_all`."""
        check_page(after_position, limit)
        self._check_open()
        return self._log[after_position : after_position + limit]

    async def stream_head(self, session_id: str) -> StreamHead | None:
        """See :meth:`.EventStore.stream_head`."""
        check_id(session_id)
        self._check_open()
        stream = self._streams.get(session_id)
        return _head(session_id, stream) if stream else None

    async def list_heads(
        self, *, after_session_id: str | None = None, limit: int = 1000
    ) -> list[StreamHead]:
        """See :meth:`.EventStore.list_heads`."""
        check_page(0, limit)
        self._check_open()
        names = sorted(
            name for name in self._streams if after_session_id is None or name > after_session_id
        )
        return [_head(name, self._streams[name]) for name in names[:limit]]

    async def recent_heads(
        self, *, before: tuple[datetime, str] | None = None, limit: int = 100
    ) -> list[StreamHead]:
        """See :meth:`.EventStore.recent_heads`."""
        check_page(0, limit)
        self._check_open()
        return _newest(self._streams, None, before, limit)

    async def fork_heads(self, session_id: str) -> list[StreamHead]:
        """See :meth:`.EventStore.fork_heads`."""
        check_id(session_id)
        self._check_open()
        heads = [
            _head(name, stream)
            for name, stream in self._streams.items()
            if isinstance(first := stream[0].event, SessionStarted) and first.fork_of == session_id
        ]
        heads.sort(key=lambda head: (head.started_at, head.session_id))
        return heads

    async def verify(self, session_id: str) -> VerifyReport:
        """See :meth:`.EventStore.verify`."""
        check_id(session_id)
        self._check_open()
        stream = self._streams.get(session_id, [])
        rows = (StoredRow.of(r) for r in stream)
        return verify_rows(session_id, rows, None)

    # -- capabilities: imports, rows, loop marks; the payloads replaced for `redaction` ---------

    async def _strip(self, changes: Sequence[Stripping], *, vacuum: bool) -> int:
        """The payloads' replacement of :attr:`redaction` (nothing to vacuum in memory)."""
        self._check_open()
        stripped = 0
        for change in changes:
            record = self._log[change.position - 1]  # positions here are 1, 2, 3...
            if record.payload != change.old:
                continue
            event = decode_payload(record.event_type, record.schema_version, change.new)
            placed = replace(record, payload=change.new, event=event)
            self._log[change.position - 1] = placed
            self._streams[record.session_id][record.version - 1] = placed
            stripped += 1
        return stripped

    async def _import(self, streams: dict[str, list[RecordedEvent]]) -> int:
        """Store checked records for :attr:`imports`, all of them or none."""
        self._check_open()
        # Decide everything before changing anything, so a refused import leaves no trace.
        writes: list[RecordedEvent] = []
        for session_id, stream_records in streams.items():
            stream = self._streams.get(session_id, [])
            head_hash = stream[-1].hash if stream else GENESIS_HASH
            plan = plan_import(session_id, stream_records, len(stream), head_hash)
            if plan.stored_from:
                window = stream[plan.stored_from - 1 : plan.stored_to]
                plan.check([StoredRow.of(r) for r in window])
            writes.extend(plan.new)
        reused = self._event_ids.intersection(r.event_id for r in writes)
        if reused:
            raise InvalidInputError(f"event id {min(reused)} is already recorded")
        for offset, record in enumerate(writes, start=len(self._log) + 1):
            placed = replace(record, position=offset)
            self._log.append(placed)
            self._streams.setdefault(record.session_id, []).append(placed)
            self._event_ids.add(record.event_id)
        if writes:
            self._committed.notify()
        return len(writes)

    async def _recorded_event_ids(self, event_ids: Collection[UUID]) -> set[UUID]:
        """Which of ``event_ids`` are stored, for :attr:`imports`."""
        self._check_open()
        return self._event_ids.intersection(event_ids)

    async def aclose(self) -> None:
        """See :meth:`.EventStore.aclose`."""
        self._closed = True
        self._committed.notify()  # subscribers wake, see the store closed, and end

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")


class _MemoryLoopMarks(LoopMarking):
    """The in-memory store's loop marks (its ``loop_marks``), held beside its log."""

    def __init__(
        self, log: list[RecordedEvent], stats: StreamsStats, check_open: Callable[[], None]
    ) -> None:
        self._log = log  # the store's own list, appended to in place
        self._stats = stats
        self._check_open = check_open
        self._held = HeldLoopMarks()

    async def loop_marks(self, session_id: str) -> list[LoopMark]:
        """See :meth:`LoopMarking.loop_marks`."""
        self._check_open()
        check_id(session_id)
        return self._held.marks(session_id)

    async def loops_through(self) -> int:
        """See :meth:`LoopMarking.loops_through`."""
        self._check_open()
        return self._held.through

    async def fold_loop_marks(self, through: int, to: int, folded: Sequence[FoldedMarks]) -> bool:
        """See :meth:`LoopMarking.fold_loop_marks`."""
        checked = check_folded(through, to, folded)
        self._check_open()
        return self._held.fold(through, to, checked)

    async def loop_counts(self, where: StatsFilter | None = None) -> LoopCounts:
        """See :meth:`LoopMarking.loop_counts` (the sessions ``stats_rows`` selects)."""
        rows = await self._stats.stats_rows(where)
        # Positions are the log's indexes from 1: the events after the position are its tail.
        behind = {record.session_id for record in self._log[self._held.through :]}
        return self._held.counts([facts.session_id for facts in rows.facts], behind)


class _MemoryTree:
    """The in-memory store's :class:`.TreeRows`: the tree's nodes in a dict, hashes from the log."""

    def __init__(self, log: list[RecordedEvent], check_open: Callable[[], None]) -> None:
        self._log = log  # the store's own list, appended to in place
        self._check_open = check_open
        self._tip = TreeTip(0, 0)
        self._nodes: dict[NodeId, tuple[bytes, tuple[int, int] | None]] = {}

    async def tip(self) -> TreeTip:
        self._check_open()
        return self._tip

    async def nodes(self, ids: Collection[NodeId]) -> dict[NodeId, bytes]:
        self._check_open()
        return {node: self._nodes[node][0] for node in ids if node in self._nodes}

    async def block(self, index: int) -> tuple[int, int] | None:
        self._check_open()
        stored = self._nodes.get((BLOCK_LEVEL, index))
        return stored[1] if stored else None

    async def block_at(self, position: int) -> tuple[int, int, int] | None:
        self._check_open()
        for (level, index), (_, span) in self._nodes.items():
            if level == BLOCK_LEVEL and span is not None and span[0] <= position <= span[1]:
                return index, span[0], span[1]
        return None

    async def hashes(
        self, *, after: int, through: int | None = None, limit: int = PAGE
    ) -> list[tuple[int, str]]:
        self._check_open()
        # Positions here are 1, 2, 3...: the record at position p is self._log[p - 1].
        end = min(after + limit, through if through is not None else after + limit)
        return [(r.position, r.hash) for r in self._log[after:end]]

    async def grow(self, old: TreeTip, new: TreeTip, nodes: Sequence[StoredNode]) -> bool:
        self._check_open()
        if self._tip != old:
            return False
        for node in nodes:
            span = (
                (node.first_position, node.last_position)
                if node.first_position is not None and node.last_position is not None
                else None
            )
            self._nodes[node.level, node.index] = (bytes.fromhex(node.hash), span)
        self._tip = new
        return True


class _MemoryOwners(Owners):
    """One principal's sessions among those held in memory (the in-memory store's ``owners``)."""

    def __init__(
        self, streams: dict[str, list[RecordedEvent]], check_open: Callable[[], None]
    ) -> None:
        self._streams = streams
        self._check_open = check_open

    async def owned_heads(
        self,
        owner: str,
        *,
        before: tuple[datetime, str] | None = None,
        limit: int = 100,
    ) -> list[StreamHead]:
        """See :meth:`Owners.owned_heads` (the sessions held, filtered)."""
        check_page(0, limit)
        self._check_open()
        return _newest(self._streams, owner, before, limit)


def _newest(
    streams: dict[str, list[RecordedEvent]],
    owner: str | None,
    before: tuple[datetime, str] | None,
    limit: int,
) -> list[StreamHead]:
    # Heads newest first, before a key, of one owner's sessions (None: every session's).
    heads = [
        _head(name, stream)
        for name, stream in streams.items()
        if owner is None or _owner(stream) == owner
    ]
    heads.sort(key=lambda head: (head.started_at, head.session_id), reverse=True)
    if before is not None:
        heads = [head for head in heads if (head.started_at, head.session_id) < before]
    return heads[:limit]


def _owner(stream: list[RecordedEvent]) -> str | None:
    for record in stream:
        if isinstance(record.event, SessionStarted):
            return record.event.owner
    return None


def _head(session_id: str, stream: list[RecordedEvent]) -> StreamHead:
    return StreamHead(
        session_id=session_id,
        version=len(stream),
        hash=stream[-1].hash,
        started_at=stream[0].recorded_at,
        updated_at=stream[-1].recorded_at,
    )


__all__ = ["MemoryEventStore"]
