"""Writing one group commit's appends to SQLite: the SQL inside the transaction.

:class:`~thoughtledger.ledger.store.sqlite.store.SqliteEventStore` queues appends and owns the
transaction; a :class:`BatchWriter` writes the queued appends inside it, each onto its session's
last event as the log holds it under the write lock.
"""

import asyncio
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from thoughtledger.ledger.chain import GENESIS_HASH, PreparedEvent, SealedEvent, seal
from thoughtledger.ledger.envelope import RecordedEvent, format_time, parse_time
from thoughtledger.ledger.errors import ConcurrencyError, InvalidInputError, LedgerError
from thoughtledger.ledger.store.rows import to_recorded
from thoughtledger.ledger.store.sqlite.statements import STATEMENTS
from thoughtledger.ledger.store.stored_forms import hash_bytes, hash_text

INSERT_EVENT = STATEMENTS["insert_event"]
INSERT_FIRST = STATEMENTS["insert_first"]
SELECT_HEAD = STATEMENTS["select_head"]
LAST_POSITION = STATEMENTS["last_position"]

Head = tuple[int, str, str]
"""A session head: its version, hash, and the stored text of its last event's time."""

_NEW_HEAD: Head = (0, GENESIS_HASH, "")  # "" sorts before every time: a new session has none


@dataclass(slots=True)
class Request:
    """One queued append, and the future its caller awaits."""

    session_id: str
    prepared: Sequence[PreparedEvent]
    expected_version: int
    ids: Sequence[UUID]
    future: asyncio.Future[list[RecordedEvent]]


@dataclass(slots=True)
class Outcome:
    """What one append came to: its recorded events, or the error its caller gets."""

    recorded: list[RecordedEvent] | None = None
    error: LedgerError | None = None


class Rejected(Exception):
    """A request of the batch was refused in a way that needs the batch rolled back."""

    def __init__(self, error: LedgerError) -> None:
        super().__init__(str(error))
        self.error = error


def reused_id(exc: sqlite3.IntegrityError) -> InvalidInputError:
    """The error for an append carrying an event id the log already holds."""
    return InvalidInputError(f"an event id of this append is already recorded ({exc})")


class BatchWriter:
    """Writes batches of appends inside the caller's transaction.

    A session's head is its last event in the log (schema step 19): read under the write lock,
    one look-up of the stream key per append, so it is never stale and nothing but the events
    is written. (Before step 19 a head row was moved per append, and this process kept the heads
    it wrote to skip reading them; the read costs less than that row's write did.)
    """

    def apply(
        self,
        db: sqlite3.Connection,
        requests: list[Request],
        now: datetime,
        *,
        isolate: bool,
    ) -> list[Outcome]:
        """Write ``requests`` in the open transaction on ``db``; return each one's outcome.

        Without ``isolate`` no savepoints are taken: a refused request has written nothing by the
        time it is refused, except on a reused event id, which raises :class:`Rejected` so that
        the caller rolls back and redoes the batch isolated (a savepoint per request).

        Raises:
            Rejected: An event id is already recorded (only without ``isolate``).
            sqlite3.Error: The database failed.
        """
        now_text = format_time(now)
        if not isolate:
            together = self._together(db, requests, now, now_text)
            if together is not None:
                return together
        outcomes: list[Outcome] = []
        for request in requests:
            if isolate:
                db.execute("SAVEPOINT append")
            try:
                outcome = self._one(db, request, now, now_text)
            except sqlite3.IntegrityError as exc:
                # Versions are checked under the write lock, so only a reused event id is left.
                error = reused_id(exc)
                if not isolate:
                    raise Rejected(error) from exc
                outcome = Outcome(error=error)
            if isolate:
                if outcome.error is not None:
                    db.execute("ROLLBACK TO append")
                db.execute("RELEASE append")
            outcomes.append(outcome)
        return outcomes

    def _together(
        self, db: sqlite3.Connection, requests: list[Request], now: datetime, now_text: str
    ) -> list[Outcome] | None:
        """Write a batch of appends to distinct sessions, each at the version it expects.

        The common case under load (many agents, one thought each per batch) costs one
        ``executemany`` for every event instead of a statement per append. ``None`` (nothing
        written) sends a batch with a session twice, or a head not where its append expects,
        down the one-by-one path, which tells the offender.

        Raises:
            Rejected: An event id is already recorded (the caller redoes the batch isolated).
        """
        heads: list[Head] = []
        sessions: set[str] = set()
        for request in requests:
            session_id = request.session_id
            if session_id in sessions:
                return None
            sessions.add(session_id)
            head = _head(db, session_id)
            if head[0] != request.expected_version:
                return None
            heads.append(head)
        position: int = db.execute(LAST_POSITION).fetchone()[0]
        rows: list[tuple[object, ...]] = []
        outcomes: list[Outcome] = []
        for request, (version, head_hash, head_time) in zip(requests, heads, strict=True):
            moment, moment_text = now, now_text
            if head_time > now_text:  # fixed-width UTC text: text order is time order
                moment, moment_text = parse_time(head_time), head_time
            sealed = seal(
                request.session_id,
                request.prepared,
                version=version,
                head_hash=head_hash,
                event_ids=request.ids,
                recorded_at=moment,
                recorded_at_text=moment_text,
            )
            rows.extend(
                (position + offset, *_columns(item)) for offset, item in enumerate(sealed, start=1)
            )
            outcomes.append(Outcome(recorded=to_recorded(sealed, position + 1)))
            position += len(sealed)
        try:
            db.executemany(INSERT_EVENT, rows)
        except sqlite3.IntegrityError as exc:
            # Versions were read under the write lock, so only a reused event id is left.
            raise Rejected(reused_id(exc)) from exc
        return outcomes

    def _one(
        self, db: sqlite3.Connection, request: Request, now: datetime, now_text: str
    ) -> Outcome:
        session_id = request.session_id
        expected = request.expected_version
        head = _head(db, session_id)
        if head[0] != expected:
            return Outcome(error=ConcurrencyError(session_id, expected, head[0]))
        moment, moment_text = now, now_text
        if head[2] > now_text:  # the clock is behind the session's last event: keep its time
            moment, moment_text = parse_time(head[2]), head[2]
        sealed = seal(
            session_id,
            request.prepared,
            version=expected,
            head_hash=head[1],
            event_ids=request.ids,
            recorded_at=moment,
            recorded_at_text=moment_text,
        )
        position = db.execute(INSERT_FIRST, _columns(sealed[0])).lastrowid
        assert position is not None  # noqa: S101  # an INSERT always sets lastrowid
        if len(sealed) > 1:
            db.executemany(
                INSERT_EVENT,
                [
                    (position + offset, *_columns(item))
                    for offset, item in enumerate(sealed[1:], start=1)
                ],
            )
        return Outcome(recorded=to_recorded(sealed, position))


def _head(db: sqlite3.Connection, session_id: str) -> Head:
    """The session's head as the log holds it now: its last event (a new session: none)."""
    row = db.execute(SELECT_HEAD, {"session_id": session_id}).fetchone()
    return (row[0], hash_text(row[1]), row[2]) if row else _NEW_HEAD


def _columns(item: SealedEvent) -> tuple[object, ...]:
    """The ``tl_events`` columns of a sealed event after its position, in table order."""
    return (
        item.session_id,
        item.version,
        item.event_id.bytes,  # canonical: the bytes read back as event_id_text
        item.recorded_at_text,
        item.schema_version,
        item.event_type,
        item.payload,
        hash_bytes(item.prev_hash),
        hash_bytes(item.hash),
    )


__all__ = [
    "INSERT_FIRST",
    "SELECT_HEAD",
    "BatchWriter",
    "Outcome",
    "Rejected",
    "Request",
    "reused_id",
]
