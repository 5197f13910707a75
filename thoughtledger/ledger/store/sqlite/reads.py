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
from pathlib import Path
from typing import Any

from thoughtledger.ledger.envelope import EventRow, LogRow, RecordedEvent
from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import StreamHead
from thoughtledger.ledger.store.checks import check_page, check_window
from thoughtledger.ledger.store.rows import decode_rows, head_time
from thoughtledger.ledger.store.sql import SqlEventStore
from thoughtledger.ledger.store.sqlite.statements import STATEMENTS
from thoughtledger.ledger.store.subscribe import PollingWatch

_NO_BOUND = 2**63 - 1
"""The largest version SQLite stores: a window bound that excludes nothing."""

POLL_INTERVAL = 0.05
"""Seconds between a subscription's checks for commits by other processes, unless told."""


class SqliteReads(SqlEventStore):
    """Reads on the held reader connection (a base of the SQLite store)."""

    path: Path
    _reader: sqlite3.Connection

    async def read_stream(
        self,
        session_id: str,
        *,
        after_version: int = 0,
        to_version: int | None = None,
        limit: int | None = None,
    ) -> list[RecordedEvent]:
        """See :meth:`EventStore.read_stream` (read inline: one indexed range of one session)."""
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
        return decode_rows(self._read(statement, params))

    async def read_all_rows(self, *, after_position: int = 0, limit: int = 1000) -> list[LogRow]:
        """See :meth:`EventStore.read_all_rows` (read inline: an indexed range of positions)."""
        check_page(after_position, limit)
        page: dict[str, object] = {"after": after_position, "limit": limit, "offset": 0}
        return list(map(LogRow._make, self._read(STATEMENTS["read_log_rows"], page)))

    async def read_all_event_rows(
        self, *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """See :meth:`~thoughtledger.ledger.store.event_rows.EventRowReads.read_all_event_rows`.

        Raises:
            InvalidInputError: A negative position or a limit below 1.
            StoreError: The read failed.
        """
        check_page(after_position, limit)
        page: dict[str, object] = {"after": after_position, "limit": limit, "offset": 0}
        return list(map(EventRow._make, self._read(STATEMENTS["read_all"], page)))

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
        return [
            StreamHead(session, version, digest, head_time(started), head_time(updated))
            for session, version, digest, started, updated in self._read(
                STATEMENTS["list_heads"], page
            )
        ]

    async def stream_head(self, session_id: str) -> StreamHead | None:
        """See :meth:`EventStore.stream_head` (read inline: one row by key)."""
        check_id(session_id)
        rows = self._read(STATEMENTS["session_head"], {"session_id": session_id})
        if not rows:
            return None
        session, version, digest, started_at, updated_at = rows[0]
        return StreamHead(session, version, digest, head_time(started_at), head_time(updated_at))

    def _watch(self, poll_interval: float | None) -> PollingWatch:
        """Subscriptions wake on this store's commits and poll for other processes' commits."""
        return PollingWatch(self._committed, poll_interval or POLL_INTERVAL, self._data_version)

    def _data_version(self) -> int:
        """Return SQLite's count of commits by other connections, the writer's included.

        Read on the reader connection: one look at the shared-memory index, no I/O (-1 once
        the store is closed).

        Raises:
            StoreError: The reader failed.
        """
        if self._closed:
            return -1
        try:
            return int(self._reader.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error as exc:
            raise StoreError(f"read from {self.path} failed: {exc}") from exc

    def _read(self, statement: str, params: dict[str, object]) -> list[Any]:
        if self._closed:
            raise StoreError("the store is closed")
        try:
            return self._reader.execute(statement, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"read from {self.path} failed: {exc}") from exc


__all__ = ["POLL_INTERVAL", "SqliteReads"]
