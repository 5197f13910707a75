"""The SQLite backend's short reads, inline on the store's held reader connection.

One session's stream, its head, pages of log rows (decoded or not) and pages of heads are indexed
ranges, far cheaper without a hop to a driver thread, and a command that only pages the log and
its heads never builds the engine (other scans go through it, see
:class:`~thoughtledger.ledger.store.sql.SqlEventStore`). Every committed event is visible to a page:
SQLite has one writer at a time, so a later commit never takes a lower position. A subscription
wakes on this store's commits and, for other processes' commits, polls the reader connection's
``data_version``.
"""

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from thoughtledger.ledger.chain import VerifyReport, verify_rows
from thoughtledger.ledger.envelope import EventRow, LogRow, RecordedEvent, format_time
from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import StreamHead
from thoughtledger.ledger.store.checks import check_page, check_window
from thoughtledger.ledger.store.redaction import Redacted
from thoughtledger.ledger.store.rows import (
    decode_rows,
    event_row,
    head_of_row,
    session_versions_sql,
    stored_row,
    types_in,
)
from thoughtledger.ledger.store.sqlite.statements import STATEMENTS

_NO_BOUND = 2**63 - 1
"""The largest version SQLite stores: a window bound that excludes nothing."""

POLL_INTERVAL = 0.05
"""Seconds between a subscription's checks for commits by other processes, unless told."""

_REDACTIONS = (
    "SELECT version, json_extract(payload, '$.version') FROM tl_events "
    "WHERE session_id = ? AND event_type = 'thought.redacted' ORDER BY version"
)


class SqliteReader:
    """The held reader connection of a SQLite store, and the reads it answers inline (a part).

    Each read has the meaning, arguments and errors of the store method of the same name.

    Args:
        connection: A connection that refuses writes (``PRAGMA query_only``).
        path: The database file, for error messages.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.connection = connection
        self.path = path
        self.closed = False

    def close(self) -> None:
        """Close the connection; every later read fails with :class:`StoreError`."""
        self.closed = True
        self.connection.close()

    async def read_stream(
        self,
        session_id: str,
        *,
        after_version: int = 0,
        to_version: int | None = None,
        limit: int | None = None,
    ) -> list[RecordedEvent]:
        """See :meth:`.EventStore.read_stream` (one indexed range of one session)."""
        check_id(session_id)
        check_window(after_version, to_version, limit)
        params: dict[str, object] = {"session_id": session_id, "after": after_version}
        statement = STATEMENTS["read_stream"]
        if to_version is not None or limit is not None:
            # One statement for every page: the bound and the limit are always bound (-1: none).
            params["to"] = to_version if to_version is not None else _NO_BOUND
            params["limit"] = limit if limit is not None else -1
            params["offset"] = 0
            statement = STATEMENTS["read_stream_page"]
        return decode_rows(self.read(statement, params))

    async def read_all_rows(self, *, after_position: int = 0, limit: int = 1000) -> list[LogRow]:
        """See :meth:`.RowReads.read_all_rows` (an indexed range of positions)."""
        check_page(after_position, limit)
        page: dict[str, object] = {"after": after_position, "limit": limit, "offset": 0}
        return list(map(LogRow._make, self.read(STATEMENTS["read_log_rows"], page)))

    async def read_all_event_rows(
        self, *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """See :meth:`~thoughtledger.ledger.store.rows.RowReads.read_all_event_rows`.

        Raises:
            InvalidInputError: A negative position or a limit below 1.
            StoreError: The read failed.
        """
        check_page(after_position, limit)
        page: dict[str, object] = {"after": after_position, "limit": limit, "offset": 0}
        return list(map(event_row, self.read(STATEMENTS["read_all"], page)))

    async def read_event_rows_of_types(
        self, event_types: Sequence[str], *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """See :meth:`~thoughtledger.ledger.store.rows.RowReads.read_event_rows_of_types`.

        Raises:
            InvalidInputError: A negative position, a limit below 1, or an unknown type.
            StoreError: The read failed.
        """
        check_page(after_position, limit)
        # The types are checked event type names, nothing else.
        statement = (
            "SELECT position, session_id, version, event_id, recorded_at, schema_version, "  # noqa: S608
            "event_type, payload, prev_hash, hash FROM tl_events "
            f"WHERE event_type IN {types_in(event_types)} AND position > :after "
            "ORDER BY position LIMIT :limit"
        )
        page: dict[str, object] = {"after": after_position, "limit": limit}
        return list(map(event_row, self.read(statement, page)))

    async def list_heads(
        self, *, after_session_id: str | None = None, limit: int = 1000
    ) -> list[StreamHead]:
        """See :meth:`~thoughtledger.ledger.store.base.EventStore.list_heads`.

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The read failed.
        """
        check_page(0, limit)
        page = {"after": after_session_id or "", "limit": limit, "offset": 0}
        return [head_of_row(row) for row in self.read(STATEMENTS["list_heads"], page)]

    async def recent_heads(
        self, *, before: tuple[datetime, str] | None = None, limit: int = 100
    ) -> list[StreamHead]:
        """See :meth:`.EventStore.recent_heads` (the first events by start: one index range).

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The read failed.
        """
        check_page(0, limit)
        page: dict[str, object] = {"limit": limit, "offset": 0}
        statement = STATEMENTS["recent_heads"]
        if before is not None:
            page["moment"], page["before"] = format_time(before[0]), before[1]
            statement = STATEMENTS["recent_heads_before"]
        return [head_of_row(row) for row in self.read(statement, page)]

    async def stream_head(self, session_id: str) -> StreamHead | None:
        """See :meth:`.EventStore.stream_head` (one row by key)."""
        check_id(session_id)
        rows = self.read(STATEMENTS["session_head"], {"session_id": session_id})
        if not rows:
            return None
        return head_of_row(rows[0])

    async def verify(self, session_id: str) -> VerifyReport:
        """See :meth:`.EventStore.verify`: the session's rows, then a head row left, if any.

        Raises:
            InvalidInputError: A malformed session id.
            StoreError: The read failed.
        """
        check_id(session_id)
        rows = self.read(STATEMENTS["read_stream"], {"session_id": session_id, "after": 0})
        # Since schema step 19 only a head row that disagreed with the log at the upgrade is
        # left (a tail cut before it); before it, every session has one.
        heads = self.read(STATEMENTS["disputed_head"], {"session_id": session_id})
        head = (heads[0][0], heads[0][1]) if heads else None
        return verify_rows(session_id, map(stored_row, rows), head)

    async def recorded_heads(self) -> dict[str, tuple[int, str]]:
        """See :meth:`.EventStore.recorded_heads` (the rows of ``tl_sessions``, normally none).

        Raises:
            StoreError: The read failed.
        """
        rows = self.read(STATEMENTS["recorded_heads"], {})
        return {session_id: (version, digest) for session_id, version, digest in rows}

    async def fork_heads(self, session_id: str) -> list[StreamHead]:
        """See :meth:`.EventStore.fork_heads` (from the index of forks, schema step 9).

        Raises:
            InvalidInputError: A malformed session id.
            StoreError: The read failed.
        """
        check_id(session_id)
        return [
            head_of_row(row)
            for row in self.read(STATEMENTS["fork_heads"], {"session_id": session_id})
        ]

    async def redactions(self, session_id: str) -> tuple[Redacted, ...]:
        """See :meth:`.Redacting.redactions` (from the partial index of redaction events)."""
        check_id(session_id)
        return tuple(map(Redacted._make, self.read(_REDACTIONS, (session_id,))))

    async def session_versions_of_types(
        self, session_id: str, event_types: Sequence[str], *, to_version: int
    ) -> list[int]:
        """See :meth:`.RowReads.session_versions_of_types` (each type's partial index, if any)."""
        check_id(session_id)
        statement = session_versions_sql(event_types)
        found = self.read(statement, {"session_id": session_id, "to_version": to_version})
        return [version for (version,) in found]

    def data_version(self) -> int:
        """Return SQLite's count of commits by other connections, the writer's included.

        Read on the reader connection: one look at the shared-memory index, no I/O (-1 once
        the store is closed).

        Raises:
            StoreError: The reader failed.
        """
        if self.closed:
            return -1
        try:
            return int(self.connection.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error as exc:
            raise StoreError(f"read from {self.path} failed: {exc}") from exc

    def read(self, statement: str, params: dict[str, object] | Sequence[Any]) -> list[Any]:
        """Run one statement on the reader connection and return its rows.

        Raises:
            StoreError: The store is closed, or the read failed.
        """
        if self.closed:
            raise StoreError("the store is closed")
        try:
            return self.connection.execute(statement, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"read from {self.path} failed: {exc}") from exc


__all__ = ["POLL_INTERVAL", "SqliteReader"]
