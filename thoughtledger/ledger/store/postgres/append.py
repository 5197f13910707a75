"""Appends to PostgreSQL: the one statement that writes them, and the heads this process wrote.

An append is one SQL statement, so it is atomic without an explicit transaction and costs one
round trip: it inserts the events only if the session's event at the expected version has the
expected hash (a new session: none), and the (session, version) key refuses the first version if
another append took it. Two appends racing on one version are serialised by that key: the loser
waits for the winner's commit and fails on the key, writing nothing. No head row is written
(schema step 19): a session's head is its last event.
The events' positions are numbered from the statement's transaction id
(:mod:`thoughtledger.ledger.store.postgres.positions`). Nothing derived from the log is written
here: the loop marks and the Merkle tree follow the log on their own.

The store (:mod:`thoughtledger.ledger.store.postgres.store`) seals the events onto a head and runs
the statement on a held writer connection, retried after a lost connection; :class:`KnownHeads`
remembers the heads this process wrote, so that the common append skips reading its head first.
"""

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from thoughtledger.ledger.chain import SealedEvent
from thoughtledger.ledger.errors import (
    ConcurrencyError,
    InvalidInputError,
    StoreError,
    StoreUnavailableError,
)
from thoughtledger.ledger.events import PAYLOAD_SCHEMA_VERSION
from thoughtledger.ledger.store.base import StreamHead
from thoughtledger.ledger.store.postgres.setup import translate as _translate

HEAD_CACHE_SIZE = 4096
"""How many session heads a store remembers (least recently written go first)."""

Head = tuple[int, str, datetime | None]
"""A session head: its version, hash, and its last event's recorded time (``None``: new)."""

# Hand-written because it must be one statement (see the module docstring); every value is bound.
# The events go on only from the event the append was sealed onto ($3, $4; 0: a new session):
# the stream key refuses a version another append took, and a rewritten head matches no hash.
_HEAD = """
WITH head AS (
    SELECT 1 WHERE $3::int = 0 OR EXISTS (
        SELECT 1 FROM tl_events
        WHERE session_id = $1 AND version = $3 AND hash = decode($4, 'hex')
    )
)"""
_EVENTS = """
INSERT INTO tl_events (position, session_id, version, event_id, recorded_at, schema_version,
                       event_type, payload, prev_hash, hash)
SELECT (pg_current_xact_id()::text::bigint << 16) + e.ord, $1, e.version, e.event_id::uuid, $2,
       $5, e.event_type, e.payload, decode(e.prev_hash, 'hex'), decode(e.hash, 'hex')
FROM head,
     unnest($6::int[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
         WITH ORDINALITY AS e(version, event_id, event_type, payload, prev_hash, hash, ord)
ORDER BY e.ord
RETURNING position
"""
_APPEND = _HEAD + _EVENTS


async def insert_sealed(
    driver: Any,
    sealed: Sequence[SealedEvent],
    *,
    expected_version: int,
    head_hash: str,
) -> list[int]:
    """Run the append statement for ``sealed`` (one session's events, sealed onto its head).

    Args:
        driver: A held writer connection's driver.
        sealed: The events, all recorded at one time, the first following the head.
        expected_version: The head's version the append was sealed onto.
        head_hash: The head's hash the append was sealed onto.

    Returns:
        The events' positions, in order; none when the event at ``expected_version`` is not the
        one sealed onto (nothing was written).

    Raises:
        Exception: The driver's errors, for the caller to translate (:func:`append_error`).
    """
    last = sealed[-1]
    rows = await driver.fetch(
        _APPEND,
        last.session_id,
        last.recorded_at,
        expected_version,
        head_hash,
        PAYLOAD_SCHEMA_VERSION,
        [item.version for item in sealed],
        [item.event_id_text for item in sealed],
        [item.event_type for item in sealed],
        [item.payload for item in sealed],
        [item.prev_hash for item in sealed],
        [item.hash for item in sealed],
    )
    return [row[0] for row in rows]


async def append_error(
    exc: Exception,
    where: str,
    session_id: str,
    expected_version: int,
    stream_head: Callable[[str], Awaitable[StreamHead | None]],
) -> Exception:
    """The error an append that failed with the driver's ``exc`` raises.

    Args:
        exc: What the append statement (or opening its connection) raised.
        where: How to name the database in error messages.
        session_id: The session appended to.
        expected_version: The version the append expected.
        stream_head: Reads the session's head now (for a conflict's current version).

    Returns:
        :class:`InvalidInputError` for an event id already recorded, :class:`ConcurrencyError`
        for a version another append took, :class:`StoreUnavailableError` for an unreachable
        server, else :class:`StoreError`.

    Raises:
        StoreError: Reading the session's head after a conflict failed.
    """
    constraint = getattr(exc, "constraint_name", None)
    if constraint == "tl_events_event_id_key":
        return InvalidInputError("an event id of this append is already recorded")
    if constraint == "tl_events_stream_key":
        head = await stream_head(session_id)
        return ConcurrencyError(session_id, expected_version, head.version if head else 0)
    if isinstance(exc, sa.exc.DBAPIError):
        return _translate(exc, where)
    if isinstance(exc, OSError | asyncio.TimeoutError):
        return StoreUnavailableError(f"cannot reach {where}: {exc}")
    return StoreError(f"append to {where} failed: {exc}")


class KnownHeads:
    """The session heads a store last wrote (a part): hints, least recently written go first.

    An entry is only a hint, checked by the append statement: the hash it must match pins the
    recorded time as well.

    Args:
        size: How many heads to remember.
    """

    def __init__(self, size: int = HEAD_CACHE_SIZE) -> None:
        self._size = size
        self._heads: OrderedDict[str, Head] = OrderedDict()

    async def head_for(
        self,
        session_id: str,
        expected_version: int,
        last_event: Callable[[str], Awaitable[Head]],
    ) -> Head:
        """The head an append expecting ``expected_version`` is sealed onto: remembered, or read.

        Args:
            session_id: The session appended to.
            expected_version: The version the append expects.
            last_event: Reads the session's last event (its version, hash and time).

        Raises:
            StoreError: Reading the head failed.
        """
        known = self.known(session_id, expected_version)
        if known is not None:
            return known
        return await last_event(session_id)

    def known(self, session_id: str, expected_version: int) -> Head | None:
        """The remembered head of the session, if it is at ``expected_version`` (nothing read)."""
        known = self._heads.get(session_id)
        return known if known is not None and known[0] == expected_version else None

    def remember(self, session_id: str, version: int, head_hash: str, moment: datetime) -> None:
        """Note the session's head as just written."""
        self._heads[session_id] = (version, head_hash, moment)
        self._heads.move_to_end(session_id)
        if len(self._heads) > self._size:
            self._heads.popitem(last=False)

    def forget(self, session_id: str) -> None:
        """Drop the session's head: it may have moved elsewhere (a failed append, an import)."""
        self._heads.pop(session_id, None)


__all__ = ["HEAD_CACHE_SIZE", "Head", "KnownHeads", "append_error", "insert_sealed"]
