"""The log's rows: reading them undecoded (a store capability), and turning them into events.

:class:`RowReads` is :meth:`~thoughtledger.ledger.store.base.EventStore.read_all` without decoding
a single payload: a fold that needs only a few fields of each event (a rebuild), or its hashes and
id (an OpenTelemetry export derives every span id from the hashes), reads these instead and parses
what it needs itself. The SQL backends read the columns straight from their tables; a store
without SQL builds them from its decoded events (:func:`log_rows_of`, :func:`event_rows_of`).

The rest turns stored rows of the SQL backends back into events, and into what verification
reads (and sealed events into the recorded events a backend returns, at their positions).

Rows arrive as plain tuples in ``tl_events`` column order (position, session_id, version,
event_id, recorded_at, schema_version, event_type, payload, prev_hash, hash): decoding is the
hot loop of every replay, so it avoids per-row attribute lookups and repeated parsing.
"""

from abc import abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from thoughtledger.ledger.chain import SealedEvent, StoredRow
from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.envelope import EventRow, LogRow, RecordedEvent, format_time, parse_time
from thoughtledger.ledger.store.heads import StreamHead
from thoughtledger.ledger.store.stored_forms import hash_text, id_text, id_uuid

Row = Sequence[Any]

COUNTED_TYPES = ("thought.annotated", "thought.captured", "thought.generated")
"""The event types the ledger-wide figures read from the whole log (per model and per label):
the SQL backends index their positions apart (schema step 14; captured thoughts since step 16),
so a read of them does not scan every row."""


def types_in(event_types: Sequence[str]) -> str:
    """``event_types`` as an SQL ``IN`` list of literals, in sorted order.

    Literals, not parameters: a partial index is used only when the query's condition is the
    index's own, known when the statement is planned. Only known event types are accepted.

    Raises:
        InvalidInputError: No type, or a type that is not an event type.
    """
    from thoughtledger.ledger.errors import InvalidInputError
    from thoughtledger.ledger.events import EVENT_TYPES

    unknown = [kind for kind in event_types if kind not in EVENT_TYPES]
    if unknown or not event_types:
        raise InvalidInputError(f"unknown event types: {unknown or 'none given'}")
    return "(" + ", ".join(f"'{kind}'" for kind in sorted(set(event_types))) + ")"


def session_versions_sql(event_types: Sequence[str]) -> str:
    """The SQL of :meth:`RowReads.session_versions_of_types` (``:session_id``, ``:to_version``).

    One ``SELECT`` a type, each naming its type as a literal (so that a partial index of that
    type is used, see :func:`types_in`), joined by ``UNION ALL``.

    Raises:
        InvalidInputError: No type, or a type that is not an event type.
    """
    types_in(event_types)  # only known types: a literal below is one of ours, never input
    select = (
        "SELECT version FROM tl_events WHERE session_id = :session_id "
        "AND event_type = '{}' AND version <= :to_version"
    )
    parts = (select.format(kind) for kind in sorted(set(event_types)))
    return " UNION ALL ".join(parts) + " ORDER BY version"


@runtime_checkable
class RowReads(Protocol):
    """Pages of the log's stored rows, undecoded, in position order (a store capability)."""

    @abstractmethod
    async def read_all_rows(self, *, after_position: int = 0, limit: int = 1000) -> list[LogRow]:
        """Like ``read_all``, but only the columns a fold needs, undecoded (bulk rebuilds).

        Raises:
            InvalidInputError: A negative position or a limit below 1.
            EventDecodingError: (a store without SQL) a stored event cannot be decoded.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def read_all_event_rows(
        self, *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """Like ``read_all``, but each event's stored columns, undecoded, time as text.

        The same events, in the same position order, with the same guarantee: a reader that
        pages with the last position it saw never skips an event that commits later.

        Raises:
            InvalidInputError: A negative position or a limit below 1.
            EventDecodingError: (a store without SQL) a stored event cannot be decoded.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def read_event_rows_of_types(
        self, event_types: Sequence[str], *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """Like :meth:`read_all_event_rows`, but only the events of the given types.

        For :data:`COUNTED_TYPES` the SQL backends read an index that holds only those; other
        types are found by a scan of the log.

        Raises:
            InvalidInputError: A negative position, a limit below 1, or an unknown type.
            EventDecodingError: (a store without SQL) a stored event cannot be decoded.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def session_versions_of_types(
        self, session_id: str, event_types: Sequence[str], *, to_version: int
    ) -> list[int]:
        """The versions of a session's events of the given types, up to ``to_version``, in order.

        The SQL backends read each type apart, with the type a literal: a type with a partial
        index of its own (annotations, actions, redactions) is read from it, any other from the
        session's range of the log's key, never by decoding a payload.

        Raises:
            InvalidInputError: A malformed session id, or an unknown type.
            StoreError: The backend failed.
        """


class RecordsRows(RowReads):
    """Pages of rows built from decoded events (the in-memory store's ``rows``).

    Args:
        read_all: The store's ``read_all``.
        read_stream: The store's ``read_stream``.
    """

    def __init__(
        self,
        read_all: Callable[..., Awaitable[list[RecordedEvent]]],
        read_stream: Callable[..., Awaitable[list[RecordedEvent]]],
    ) -> None:
        self._read_all = read_all
        self._read_stream = read_stream

    async def read_all_rows(self, *, after_position: int = 0, limit: int = 1000) -> list[LogRow]:
        """See :meth:`RowReads.read_all_rows` (built from the decoded events)."""
        return log_rows_of(await self._read_all(after_position=after_position, limit=limit))

    async def read_all_event_rows(
        self, *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """See :meth:`RowReads.read_all_event_rows` (built from the decoded events)."""
        return event_rows_of(await self._read_all(after_position=after_position, limit=limit))

    async def read_event_rows_of_types(
        self, event_types: Sequence[str], *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """See :meth:`RowReads.read_event_rows_of_types` (pages of the log, filtered)."""
        types_in(event_types)
        wanted = set(event_types)
        found: list[EventRow] = []
        while len(found) < limit:
            page = await self._read_all(after_position=after_position, limit=limit)
            found += (row for row in event_rows_of(page) if row.event_type in wanted)
            if len(page) < limit:
                break
            after_position = page[-1].position
        return found[:limit]

    async def session_versions_of_types(
        self, session_id: str, event_types: Sequence[str], *, to_version: int
    ) -> list[int]:
        """See :meth:`RowReads.session_versions_of_types` (the session's events, filtered)."""
        types_in(event_types)
        wanted = set(event_types)
        records = await self._read_stream(session_id, to_version=to_version)
        return [r.version for r in records if r.event.type in wanted]


def log_rows_of(records: Iterable[RecordedEvent]) -> list[LogRow]:
    """Return the fold columns of decoded events (a store without SQL has no rows to read)."""
    return [
        LogRow(
            r.position,
            r.session_id,
            r.version,
            format_time(r.recorded_at),
            r.schema_version,
            r.event_type,
            r.payload,
        )
        for r in records
    ]


def event_rows_of(records: Iterable[RecordedEvent]) -> list[EventRow]:
    """Return the stored columns of decoded events (see :func:`log_rows_of`)."""
    return [EventRow.of(record) for record in records]


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
                event_id=id_uuid(event_id),
                recorded_at=last_moment,
                schema_version=schema,
                event_type=kind,
                payload=payload,
                prev_hash=hash_text(prev),
                hash=hash_text(digest),
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
        event_id=id_text(event_id),
        recorded_at=format_time(recorded_at) if isinstance(recorded_at, datetime) else recorded_at,
        schema_version=schema,
        event_type=kind,
        payload=payload,
        prev_hash=hash_text(prev),
        hash=hash_text(digest),
    )


def event_row(row: Row) -> EventRow:
    """Return every column of one ``tl_events`` row, undecoded (see :class:`EventRow`)."""
    position, session_id, version, event_id, recorded_at, schema, kind, payload, prev, digest = row
    if isinstance(recorded_at, datetime):
        recorded_at = format_time(recorded_at)
    return EventRow(
        position,
        session_id,
        version,
        id_text(event_id),
        recorded_at,
        schema,
        kind,
        payload,
        hash_text(prev),
        hash_text(digest),
    )


def log_row(row: Row) -> LogRow:
    """Return the fold columns of one ``tl_events`` row (see :class:`LogRow`), time as text."""
    position, session_id, version, recorded_at, schema, kind, payload = row
    moment = format_time(recorded_at) if isinstance(recorded_at, datetime) else recorded_at
    return LogRow(position, session_id, version, moment, schema, kind, payload)


def head_time(value: Any) -> datetime:
    """Return a stored session-head time as an aware datetime."""
    return value if isinstance(value, datetime) else parse_time(value)


def head_of_row(row: Row) -> StreamHead:
    """The head a row of heads holds (see :data:`.heads_sql.HEAD_COLUMNS`, the log's hash form)."""
    session_id, version, digest, started_at, updated_at = row
    return StreamHead(
        session_id, version, hash_text(digest), head_time(started_at), head_time(updated_at)
    )


def to_recorded(sealed: Sequence[SealedEvent], first_position: int) -> list[RecordedEvent]:
    """Give sealed events consecutive positions from ``first_position``."""
    return [item.at(first_position + index) for index, item in enumerate(sealed)]


__all__ = [
    "RecordsRows",
    "RowReads",
    "decode_rows",
    "event_row",
    "event_rows_of",
    "head_of_row",
    "head_time",
    "log_row",
    "log_rows_of",
    "session_versions_sql",
    "stored_row",
    "to_recorded",
]
