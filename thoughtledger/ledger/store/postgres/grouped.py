"""Appends to several sessions at once, written by one statement: one round trip, one commit.

Why. A writer that appends to many sessions at once (the OTLP receiver takes a batch of spans
over a few conversations; a busy server records for many agents) made one statement per
session: a batch of 512 spans over 16 conversations cost 16 round trips and 16 commits over
the store's four writer connections, and the receiver waited on PostgreSQL for a third of its
time. Written together they cost one of each.

How. The appends made in one turn of the event loop are queued; the first plans a flush, as
SQLite's writer does (:mod:`thoughtledger.ledger.store.sqlite.batch`). A flush writes together
the appends to distinct sessions whose heads this process knows (it wrote them last, or an
append starts a session), up to :data:`GROUP_EVENTS` events, with one statement: a session's
events are inserted only if its event at the version its append expects has the hash it expects,
all in the statement's one transaction (positions come from its transaction id, as a lone
append's do). Everything else goes the lone append's way, with its checks, retries and errors
unchanged: an append alone in its turn, one whose head is not known, a second append to a
session, one whose head was not the one expected, and every append of a group whose statement
failed (a reused event id, or a version another append took, fails the whole statement on the
log's key; each append is then tried alone, and only the offender is refused).
"""

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from thoughtledger.ledger.chain import GENESIS_HASH, PreparedEvent, SealedEvent, seal
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import ConcurrencyError, StoreError
from thoughtledger.ledger.events import PAYLOAD_SCHEMA_VERSION
from thoughtledger.ledger.store.postgres.append import Head, KnownHeads

_KEYS = ("tl_events_event_id_key", "tl_events_stream_key")
"""The log's unique keys: a statement refused on one wrote nothing."""

GROUP_EVENTS = 32_768
"""The most events one statement writes (a transaction numbers at most 65,536 positions)."""

# Hand-written: one statement (see the module docstring); every value is bound. A session's
# events go in only from the event its append was sealed onto (0: a new session); the stream
# key refuses the whole statement if another append took one of their versions. They go in by
# session id (their positions still follow the input), so that two statements over the same
# sessions wait on each other's keys in one order, never in a cycle.
_GROUP = """
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[])
        AS i(session_id, expected, expected_hash)
),
head AS (
    SELECT i.session_id FROM input AS i
    WHERE i.expected = 0 OR EXISTS (
        SELECT 1 FROM tl_events AS h
        WHERE h.session_id = i.session_id AND h.version = i.expected
          AND h.hash = decode(i.expected_hash, 'hex')
    )
)
INSERT INTO tl_events (position, session_id, version, event_id, recorded_at, schema_version,
                       event_type, payload, prev_hash, hash)
SELECT (pg_current_xact_id()::text::bigint << 16) + e.ord, e.session_id, e.version,
       e.event_id::uuid, e.recorded_at, $4, e.event_type, e.payload, decode(e.prev_hash, 'hex'),
       decode(e.hash, 'hex')
FROM unnest($5::text[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[],
            $11::text[], $12::timestamptz[])
         WITH ORDINALITY AS e(session_id, version, event_id, event_type, payload, prev_hash, hash,
                              recorded_at, ord)
JOIN head ON head.session_id = e.session_id
ORDER BY e.session_id, e.version
RETURNING session_id, position
"""

Alone = Callable[
    [str, Sequence[PreparedEvent], int, Sequence[UUID]], Awaitable[list[RecordedEvent]]
]
"""A lone append: session, prepared events, expected version, event ids."""


@dataclass(slots=True)
class _Queued:
    session_id: str
    prepared: Sequence[PreparedEvent]
    expected_version: int
    ids: Sequence[UUID]
    future: "asyncio.Future[list[RecordedEvent]]"


class GroupedAppends:
    """The store's appends, written together when several come at once (a part of the store).

    Args:
        heads: The heads the store last wrote.
        alone: The store's lone append (its checks, retries and errors).
        writer: Lends a held writer connection's driver.
        record_time: The time an append after a head of that time records.
        stored: The stored events when an append with these ids already succeeded, else
            ``None`` (after a group's statement failed in a way that leaves its outcome unknown).
        written: Hears how many events a group's commit wrote.
    """

    def __init__(
        self,
        heads: KnownHeads,
        alone: Alone,
        writer: Callable[[], AbstractAsyncContextManager[Any]],
        record_time: Callable[[datetime | None], datetime],
        stored: Callable[
            [str, Sequence[PreparedEvent], int, Sequence[UUID]],
            Awaitable[list[RecordedEvent] | None],
        ],
        written: Callable[[int], None],
    ) -> None:
        self._heads = heads
        self._alone = alone
        self._writer = writer
        self._record_time = record_time
        self._stored = stored
        self._written = written
        self._pending: list[_Queued] = []
        self._flushes: set[asyncio.Task[None]] = set()

    async def append(
        self,
        session_id: str,
        prepared: Sequence[PreparedEvent],
        expected_version: int,
        ids: Sequence[UUID],
    ) -> list[RecordedEvent]:
        """Append (alone, or with the others of this turn of the event loop).

        Raises:
            ConcurrencyError: The session is not at ``expected_version``.
            InvalidInputError: An event id is already recorded.
            StoreError: The store failed; nothing of this append was written.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[RecordedEvent]] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending.append(_Queued(session_id, prepared, expected_version, ids, future))
        return await future

    def _flush(self) -> None:
        queued, self._pending = self._pending, []
        task = asyncio.get_running_loop().create_task(self._write(queued))
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _write(self, queued: list[_Queued]) -> None:
        try:
            await self._group_or_alone(queued)
        finally:  # a flush cut short (its loop closing) leaves no caller waiting forever
            for item in queued:
                if not item.future.done():
                    item.future.set_exception(StoreError("the append was cut short"))

    async def _group_or_alone(self, queued: list[_Queued]) -> None:
        group: list[tuple[_Queued, Head]] = []
        alone: list[_Queued] = []
        sessions: set[str] = set()
        events = 0
        for item in queued:
            head = self._heads.known(item.session_id, item.expected_version)
            if head is None and item.expected_version == 0:
                head = (0, GENESIS_HASH, None)  # a new session: the statement checks it is new
            fits = events + len(item.prepared) <= GROUP_EVENTS
            if head is None or item.session_id in sessions or not fits:
                alone.append(item)
                continue
            sessions.add(item.session_id)
            events += len(item.prepared)
            group.append((item, head))
        unknown = False
        if len(group) > 1:
            left, unknown = await self._together(group)
            alone += left
        else:
            alone += [item for item, _head in group]
        await asyncio.gather(*(self._one(item, unknown=unknown) for item in alone))

    async def _together(self, group: list[tuple[_Queued, Head]]) -> tuple[list[_Queued], bool]:
        """Write ``group`` in one statement; the appends left to go alone, and whether unknown.

        The statement's outcome is unknown when it failed otherwise than on a reused event id
        (its answer may have been lost after it committed).
        """
        sealed: list[list[SealedEvent]] = []
        for item, (version, head_hash, head_time) in group:
            moment = self._record_time(head_time)
            sealed.append(
                seal(
                    item.session_id,
                    item.prepared,
                    version=version,
                    head_hash=head_hash,
                    event_ids=item.ids,
                    recorded_at=moment,
                )
            )
        rows = [event for events in sealed for event in events]
        try:
            async with self._writer() as driver:
                found = await driver.fetch(
                    _GROUP,
                    [events[-1].session_id for events in sealed],
                    [item.expected_version for item, _head in group],
                    [head[1] for _item, head in group],
                    PAYLOAD_SCHEMA_VERSION,
                    [event.session_id for event in rows],
                    [event.version for event in rows],
                    [event.event_id_text for event in rows],
                    [event.event_type for event in rows],
                    [event.payload for event in rows],
                    [event.prev_hash for event in rows],
                    [event.hash for event in rows],
                    [event.recorded_at for event in rows],
                )
        except Exception as exc:  # each append, alone, meets the error its own way
            for item, _head in group:
                self._heads.forget(item.session_id)
            # Refused on a key, the statement wrote nothing; else its answer may have been lost.
            refused = getattr(exc, "constraint_name", None) in _KEYS
            return [item for item, _head in group], not refused
        positions: dict[str, list[int]] = {}
        for row in found:
            positions.setdefault(row[0], []).append(row[1])
        left: list[_Queued] = []
        for (item, _head), events in zip(group, sealed, strict=True):
            got = positions.get(item.session_id)
            if not got:  # its head had moved: alone, it is told so (or sees why not)
                self._heads.forget(item.session_id)
                left.append(item)
                continue
            last = events[-1]
            self._heads.remember(item.session_id, last.version, last.hash, last.recorded_at)
            if not item.future.done():  # a cancelled caller: its append stands regardless
                item.future.set_result(
                    [event.at(position) for event, position in zip(events, got, strict=True)]
                )
        if len(found):
            self._written(len(found))
        return left, False

    async def _one(self, item: _Queued, *, unknown: bool) -> None:
        args = (item.session_id, item.prepared, item.expected_version, item.ids)
        try:
            try:
                result = await self._alone(*args)
            except ConcurrencyError:
                # The group's statement may have written it before its answer was lost.
                stored = await self._stored(*args) if unknown else None
                if stored is None:
                    raise
                result = stored
        except Exception as exc:  # handed to the caller, whose append it is
            if not item.future.done():
                item.future.set_exception(exc)
            return
        if not item.future.done():
            item.future.set_result(result)


__all__ = ["GROUP_EVENTS", "GroupedAppends"]
