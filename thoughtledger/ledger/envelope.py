"""The envelope a stored event travels in: where it sits in the log, when, and its hashes."""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple, Self
from uuid import UUID

from thoughtledger.ledger.events import LedgerEvent


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """An event as stored in the log.

    Attributes:
        position: Global position in the log; strictly increasing in commit order (not dense on
            every backend: PostgreSQL positions leave gaps so that readers never miss an event).
        session_id: The session (stream) the event belongs to.
        version: Position within the session: 1, 2, 3... with no gaps.
        event_id: Unique id of the event (UUIDv7); appending the same ids twice is a no-op.
        recorded_at: When the store recorded it (UTC, microsecond precision).
        schema_version: The payload schema version it was written with.
        event_type: The stored type string, such as ``"thought.recorded"``.
        payload: The exact stored JSON payload (what the hash covers).
        prev_hash: ``hash`` of the previous event in the session (64 zeros for version 1).
        hash: SHA-256 over this envelope's fields, the payload and ``prev_hash``.
        event: The decoded event.
    """

    position: int
    session_id: str
    version: int
    event_id: UUID
    recorded_at: datetime
    schema_version: int
    event_type: str
    payload: str
    prev_hash: str
    hash: str
    event: LedgerEvent


class LogRow(NamedTuple):
    """The stored columns of one event that folding it needs, undecoded (no id, no hashes).

    Bulk rebuilds read millions of these: a named tuple is the cheapest immutable row to build.

    Attributes:
        position: Global position in the log.
        session_id: The session the event belongs to.
        version: Its version in the session.
        recorded_at: When it was recorded, in the canonical text of :func:`format_time`.
        schema_version: The payload schema version it was written with.
        event_type: The stored type string.
        payload: The stored JSON payload.
    """

    position: int
    session_id: str
    version: int
    recorded_at: str
    schema_version: int
    event_type: str
    payload: str


class EventRow(NamedTuple):
    """Every stored column of one event, undecoded: a :class:`LogRow` with its id and hashes.

    What a bulk fold reads when it needs an event's identity (an OpenTelemetry export derives
    every span id from the hashes) but only a few of its fields, which it parses itself.

    Attributes:
        position: Global position in the log.
        session_id: The session the event belongs to.
        version: Its version in the session.
        event_id: Its id, as stored (canonical UUID text).
        recorded_at: When it was recorded, in the canonical text of :func:`format_time`.
        schema_version: The payload schema version it was written with.
        event_type: The stored type string.
        payload: The stored JSON payload.
        prev_hash: The hash of the session's previous event.
        hash: Its own hash.
    """

    position: int
    session_id: str
    version: int
    event_id: str
    recorded_at: str
    schema_version: int
    event_type: str
    payload: str
    prev_hash: str
    hash: str

    @classmethod
    def of(cls, record: RecordedEvent) -> Self:
        """Return the stored columns of a recorded event."""
        return cls(
            record.position,
            record.session_id,
            record.version,
            str(record.event_id),
            format_time(record.recorded_at),
            record.schema_version,
            record.event_type,
            record.payload,
            record.prev_hash,
            record.hash,
        )


def format_time(moment: datetime) -> str:
    """Return the canonical text form of a UTC time, as hashed and as stored in SQLite.

    Args:
        moment: An aware datetime.

    Returns:
        ``YYYY-MM-DDTHH:MM:SS.ffffffZ``, fixed width, so text order is time order.
    """
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """Parse the canonical text form produced by :func:`format_time`."""
    return datetime.fromisoformat(text)


__all__ = ["EventRow", "LogRow", "RecordedEvent", "format_time", "parse_time"]
