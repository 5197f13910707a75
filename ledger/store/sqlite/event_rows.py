"""The SQLite backend's undecoded read of the log (see :mod:`ledger.store.event_rows`).

Read inline on the store's held reader connection, like a page of log rows: an indexed range of
positions, whose rows are :class:`~ledger.envelope.EventRow` as they come (SQLite keeps times as
their canonical text already). Every committed event is visible: SQLite has one writer at a time,
so a later commit never takes a lower position.
"""

from typing import Any

from ledger.envelope import EventRow
from ledger.store.checks import check_page
from ledger.store.event_rows import EventRowReads
from ledger.store.sqlite.statements import STATEMENTS


class SqliteEventRowReads(EventRowReads):
    """:meth:`read_all_event_rows` on the held reader connection (a mixin of the SQLite store)."""

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


__all__ = ["SqliteEventRowReads"]
