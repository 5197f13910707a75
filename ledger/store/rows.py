"""Turning stored rows of the SQL backends back into events, and into what verification reads."""

from datetime import datetime
from typing import Any
from uuid import UUID

from ledger.chain import StoredRow
from ledger.codec import decode_payload
from ledger.envelope import RecordedEvent, format_time, parse_time


def _time(value: Any) -> datetime:
    # SQLite returns the canonical text, PostgreSQL an aware datetime.
    return value if isinstance(value, datetime) else parse_time(value)


def _time_text(value: Any) -> str:
    return format_time(value) if isinstance(value, datetime) else str(value)


def decode_row(row: Any) -> RecordedEvent:
    """Decode one ``tl_events`` row (any object with the column names as attributes).

    Raises:
        EventDecodingError: The stored type, schema version or payload cannot be decoded.
    """
    return RecordedEvent(
        position=row.position,
        session_id=row.session_id,
        version=row.version,
        event_id=UUID(row.event_id),
        recorded_at=_time(row.recorded_at),
        schema_version=row.schema_version,
        event_type=row.event_type,
        payload=row.payload,
        prev_hash=row.prev_hash,
        hash=row.hash,
        event=decode_payload(row.event_type, row.schema_version, row.payload),
    )


def stored_row(row: Any) -> StoredRow:
    """Return the stored columns of one ``tl_events`` row, undecoded, for chain verification."""
    return StoredRow(
        position=row.position,
        session_id=row.session_id,
        version=row.version,
        event_id=row.event_id,
        recorded_at=_time_text(row.recorded_at),
        schema_version=row.schema_version,
        event_type=row.event_type,
        payload=row.payload,
        prev_hash=row.prev_hash,
        hash=row.hash,
    )


def head_time(value: Any) -> datetime:
    """Return a stored session-head time as an aware datetime."""
    return _time(value)


__all__ = ["decode_row", "head_time", "stored_row"]
