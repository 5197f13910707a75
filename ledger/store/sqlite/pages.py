"""The SQLite backend's paged scans served inline: pages of the log's rows and of the heads.

Read on the store's held reader connection, like one session's stream: each page is one short
indexed range, far cheaper without a hop to a driver thread (and without building the engine,
which a command that only pages the log and its heads then never imports). Every committed
event is visible: SQLite has one writer at a time, so a later commit never takes a lower
position.
"""

from typing import Any

from ledger.envelope import EventRow
from ledger.store.base import StreamHead
from ledger.store.checks import check_page
from ledger.store.event_rows import EventRowReads
from ledger.store.rows import head_time
from ledger.store.sqlite.statements import STATEMENTS


class SqlitePages(EventRowReads):
    """Pages of event rows and of heads on the held reader connection (a mixin of the store)."""

    def _read(self, statement: str, params: Any) -> list[Any]:
        raise NotImplementedError  # the store's own

    async def read_all_event_rows(
        self, *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """See :meth:`~ledger.store.event_rows.EventRowReads.read_all_event_rows`.

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
        """See :meth:`~ledger.store.base.EventStore.list_heads`.

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


__all__ = ["SqlitePages"]
