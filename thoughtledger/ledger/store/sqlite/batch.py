"""Writing one group commit's appends to SQLite: the SQL inside the transaction.

:class:`~thoughtledger.ledger.store.sqlite.store.SqliteEventStore` queues appends and owns the
transaction; a :class:`BatchWriter` writes the queued appends inside it and remembers the session
heads this process wrote, a hint that lets the common batch skip reading them back (every head move
is still checked against the database).
"""

import asyncio
import sqlite3
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from thoughtledger.ledger.chain import GENESIS_HASH, PreparedEvent, SealedEvent, seal
from thoughtledger.ledger.envelope import RecordedEvent, format_time, parse_time
from thoughtledger.ledger.errors import ConcurrencyError, InvalidInputError, LedgerError
from thoughtledger.ledger.store.rows import to_recorded
from thoughtledger.ledger.store.sqlite.statements import STATEMENTS
from thoughtledger.ledger.store.stored_forms import hash_bytes

INSERT_EVENT = STATEMENTS["insert_event"]
INSERT_FIRST = STATEMENTS["insert_first"]
SELECT_HEAD = STATEMENTS["select_head"]
MOVE_HEAD = STATEMENTS["move_head"]
LAST_POSITION = STATEMENTS["last_position"]

HEAD_CACHE_SIZE = 4096
"""How many session heads a writer remembers (least recently written go first)."""

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
    """Writes batches of appends and keeps the heads they moved, once their commit succeeded."""

    def __init__(self) -> None:
        # Heads this process wrote last; a hint checked by MOVE_HEAD, never trusted blindly (the
        # hash it must match pins the time too, as the hash covers it).
        self.heads: OrderedDict[str, Head] = OrderedDict()
        # Heads moved by the transaction in progress: kept on commit, forgotten on rollback.
        self.touched: list[tuple[str, Head]] = []

    def forget(self, session_id: str) -> None:
        """Drop what is known of ``session_id``'s head (another writer may have moved it)."""
        self.heads.pop(session_id, None)

    def committed(self) -> None:
        """Remember the heads the committed transaction moved."""
        heads = self.heads
        for session_id, head in self.touched:
            heads[session_id] = head
            heads.move_to_end(session_id)
        self.touched = []
        while len(heads) > HEAD_CACHE_SIZE:
            heads.popitem(last=False)

    def rolled_back(self) -> None:
        """Forget the heads the rolled-back transaction touched."""
        for session_id, _head in self.touched:
            self.forget(session_id)
        self.touched = []

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
        """Write a batch of appends to distinct sessions whose heads this process knows.

        The common case under load (many agents, one thought each per batch) costs two
        ``executemany`` calls instead of two statements per append. Each head moves only from the
        version and hash its request expects; if any did not move (another process wrote it),
        the batch's writes are undone and ``None`` sends it down the checked one-by-one path.

        Raises:
            Rejected: An event id is already recorded (the caller redoes the batch isolated).
        """
        heads: list[Head] = []
        sessions: set[str] = set()
        for request in requests:
            session_id = request.session_id
            head = self.heads.get(session_id)
            if head is None and request.expected_version == 0:
                head = _NEW_HEAD  # the head row must not exist yet
            if head is None or head[0] != request.expected_version or session_id in sessions:
                return None
            sessions.add(session_id)
            heads.append(head)
        position: int = db.execute(LAST_POSITION).fetchone()[0]
        moves: list[dict[str, object]] = []
        rows: list[tuple[object, ...]] = []
        outcomes: list[Outcome] = []
        touched: list[tuple[str, Head]] = []
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
            last = sealed[-1]
            moves.append(_head_move(last, expected=version, prev=head_hash))
            rows.extend(
                (position + offset, *_columns(item)) for offset, item in enumerate(sealed, start=1)
            )
            outcomes.append(Outcome(recorded=to_recorded(sealed, position + 1)))
            touched.append((request.session_id, (last.version, last.hash, moment_text)))
            position += len(sealed)
        db.execute("SAVEPOINT together")
        if db.executemany(MOVE_HEAD, moves).rowcount != len(moves):
            db.execute("ROLLBACK TO together")
            db.execute("RELEASE together")
            for session_id, _head in touched:
                self.forget(session_id)
            return None
        try:
            db.executemany(INSERT_EVENT, rows)
        except sqlite3.IntegrityError as exc:
            # Versions were checked by the head moves, so only a reused event id is left.
            raise Rejected(reused_id(exc)) from exc
        db.execute("RELEASE together")
        self.touched.extend(touched)
        return outcomes

    def _one(
        self, db: sqlite3.Connection, request: Request, now: datetime, now_text: str
    ) -> Outcome:
        session_id = request.session_id
        expected = request.expected_version
        head = self.heads.get(session_id)
        if head is None or head[0] != expected:
            # Not known here (or known differently): ask the database, which is authoritative.
            row = db.execute(SELECT_HEAD, {"session_id": session_id}).fetchone()
            head = (row[0], row[1], row[2]) if row else _NEW_HEAD
            if head[0] != expected:
                self.forget(session_id)
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
        last = sealed[-1]
        moved = db.execute(MOVE_HEAD, _head_move(last, expected=expected, prev=head[1])).rowcount
        if moved != 1:
            # Another process moved the head since this one cached it.
            self.forget(session_id)
            row = db.execute(SELECT_HEAD, {"session_id": session_id}).fetchone()
            actual = row[0] if row else 0
            if actual == expected:  # same version, other hash: the cache was simply stale
                return self._one(db, request, now, now_text)
            return Outcome(error=ConcurrencyError(session_id, expected, actual))
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
        self.touched.append((session_id, (last.version, last.hash, moment_text)))
        return Outcome(recorded=to_recorded(sealed, position))


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


def _head_move(last: SealedEvent, *, expected: int, prev: str) -> dict[str, object]:
    """MOVE_HEAD's parameters: the head goes to ``last`` only from (``expected``, ``prev``)."""
    return {
        "session_id": last.session_id,
        "version": last.version,
        "hash": last.hash,
        "now": last.recorded_at_text,
        "expected": expected,
        "prev": prev,
    }


__all__ = [
    "HEAD_CACHE_SIZE",
    "INSERT_FIRST",
    "SELECT_HEAD",
    "BatchWriter",
    "Outcome",
    "Rejected",
    "Request",
    "reused_id",
]
