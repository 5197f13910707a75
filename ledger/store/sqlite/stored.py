"""The SQLite backend's undecoded read of the log (see :mod:`ledger.store.stored`).

Read inline on the store's held reader connection, like a page of log rows: an indexed range of
positions, whose rows become :class:`~ledger.chain.StoredRow` as they are (SQLite keeps times as
their canonical text already). Every committed event is visible: SQLite has one writer at a time,
so a later commit never takes a lower position.
"""

from typing import Any

from ledger.chain import StoredRow
from ledger.store.checks import check_page
from ledger.store.sqlite.statements import STATEMENTS
from ledger.store.stored import StoredReads


class SqliteStoredReads(StoredReads):
    """:meth:`read_all_stored` on the held reader connection (a mixin of the SQLite store)."""

    def _read(self, statement: str, params: Any) -> list[Any]:
        raise NotImplementedError  # the store's own

    async def read_all_stored(
        self, *, after_position: int = 0, limit: int = 1000
    ) -> list[StoredRow]:
        """See :meth:`~ledger.store.stored.StoredReads.read_all_stored` (nothing decoded).

        Raises:
            InvalidInputError: A negative position or a limit below 1.
            StoreError: The read failed.
        """
        check_page(after_position, limit)
        page: dict[str, object] = {"after": after_position, "limit": limit, "offset": 0}
        return [StoredRow(*row) for row in self._read(STATEMENTS["read_all"], page)]


__all__ = ["SqliteStoredReads"]
