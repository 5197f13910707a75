"""Turning stored rows of the SQL backends back into events, and into what verification reads.

(And sealed events into the recorded events a backend returns, at their positions.)

Rows arrive as plain tuples in ``tl_events`` column order (position, session_id, version,
event_id, recorded_at, schema_version, event_type, payload, prev_hash, hash): decoding is the
hot loop of every replay, so it avoids per-row attribute lookups and repeated parsing.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID, SafeUUID

from thoughtledger.ledger.chain import SealedEvent, StoredRow
from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.envelope import EventRow, LogRow, RecordedEvent, format_time, parse_time

Row = Sequence[Any]


def _uuid(text: str) -> UUID:
    # UUID(text) validates and normalises at ~4 us a call; stored ids are canonical text written by
    # this code, so building the object from its integer is enough (and 4x cheaper).
    value = object.__new__(UUID)
    object.__setattr__(value, "int", int(text.replace("-", ""), 16))
    object.__setattr__(value, "is_safe", SafeUUID.unknown)
    return value


def decode_rows(rows: Iterable[Row]) -> list[RecordedEvent]:
    """Decode ``tl_events`` rows (tuples in column order) into recorded events.

    Raises:
        EventDecodingError: A stored type, schema version or payload cannot be decoded.
    """
    decoded: list[RecordedEvent] = []
    last_time: Any = None
    last_moment: datetime | None = None
    for (
        position,
        session_id,
        version,
        event_id,
        recorded_at,
        schema,
        kind,
        payload,
        prev,
        digest,
    ) in rows:
        # Events of one append share their time; parse each distinct value once.
        if recorded_at != last_time:
            last_time = recorded_at
            last_moment = (
                recorded_at if isinstance(recorded_at, datetime) else parse_time(recorded_at)
            )
        assert last_moment is not None  # noqa: S101  # set on the first row
        decoded.append(
            RecordedEvent(
                position=position,
                session_id=session_id,
                version=version,
                event_id=_uuid(event_id),
                recorded_at=last_moment,
                schema_version=schema,
                event_type=kind,
                payload=payload,
                prev_hash=prev,
                hash=digest,
                event=decode_payload(kind, schema, payload),
            )
        )
    return decoded


def stored_row(row: Row) -> StoredRow:
    """Return the stored columns of one ``tl_events`` row, undecoded, for chain verification."""
    position, session_id, version, event_id, recorded_at, schema, kind, payload, prev, digest = row
    return StoredRow(
        position=position,
        session_id=session_id,
        version=version,
        event_id=event_id,
        recorded_at=format_time(recorded_at) if isinstance(recorded_at, datetime) else recorded_at,
        schema_version=schema,
        event_type=kind,
        payload=payload,
        prev_hash=prev,
        hash=digest,
    )


def event_row(row: Row) -> EventRow:
    """Return every column of one ``tl_events`` row, undecoded (see :class:`EventRow`)."""
    position, session_id, version, event_id, recorded_at, schema, kind, payload, prev, digest = row
    if isinstance(recorded_at, datetime):
        recorded_at = format_time(recorded_at)
    return EventRow(
        position, session_id, version, event_id, recorded_at, schema, kind, payload, prev, digest
    )


def log_row(row: Row) -> LogRow:
    """Return the fold columns of one ``tl_events`` row (see :class:`LogRow`), time as text."""
    position, session_id, version, recorded_at, schema, kind, payload = row
    moment = format_time(recorded_at) if isinstance(recorded_at, datetime) else recorded_at
    return LogRow(position, session_id, version, moment, schema, kind, payload)


def head_time(value: Any) -> datetime:
    """Return a stored session-head time as an aware datetime."""
    return value if isinstance(value, datetime) else parse_time(value)


def to_recorded(sealed: Sequence[SealedEvent], first_position: int) -> list[RecordedEvent]:
    """Give sealed events consecutive positions from ``first_position``."""
    return [item.at(first_position + index) for index, item in enumerate(sealed)]


__all__ = ["decode_rows", "event_row", "head_time", "log_row", "stored_row", "to_recorded"]
