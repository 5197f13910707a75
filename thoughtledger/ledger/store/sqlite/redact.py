"""The SQLite backend's removal of redacted texts (see :mod:`thoughtledger.ledger.store.redaction`).

Run on the writer connection between group commits, like an import. SQLite leaves a replaced
value's bytes in the file (in the page's free space, and in the write-ahead log's older frames)
until they are written over, so the replacement runs with ``PRAGMA secure_delete = ON`` (freed
space is zeroed) and is followed by ``PRAGMA wal_checkpoint(TRUNCATE)``: the new pages are copied
into the database file and the write-ahead log is emptied, so neither file holds the text.
"""

import sqlite3
from collections.abc import Sequence
from typing import Any

from thoughtledger.ledger.errors import StoreError, StoreUnavailableError
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.redaction import Redacted, Stripping
from thoughtledger.ledger.store.sqlite.writer import Busy, SqliteWriter

STRIP = "UPDATE tl_events SET payload = ? WHERE position = ? AND payload = ?"
REDACTIONS = (
    "SELECT version, json_extract(payload, '$.version') FROM tl_events "
    "WHERE session_id = ? AND event_type = 'thought.redacted' ORDER BY version"
)


class SqliteRedaction(SqliteWriter):
    """Stripping on the held writer connection (a base of the SQLite store)."""

    def _read(self, statement: str, params: Any) -> list[Any]:
        raise NotImplementedError  # the store's own

    async def redactions(self, session_id: str) -> tuple[Redacted, ...]:
        """See :meth:`Redactable.redactions` (read inline, from the partial index)."""
        check_id(session_id)
        return tuple(map(Redacted._make, self._read(REDACTIONS, (session_id,))))

    async def _strip(self, changes: Sequence[Stripping], *, vacuum: bool) -> int:
        stripped = await self._between_commits(
            lambda: self._strip_now(changes), "nothing was redacted, try again"
        )
        try:
            await self._between_commits(self._checkpoint, "")
        except StoreUnavailableError:
            raise StoreError(
                f"another process kept the write-ahead log of {self.path} in use: the redacted "
                "text is gone from every read, but its old bytes stay in the log until the next "
                "checkpoint; run redact again when no other process reads the ledger"
            ) from None
        return stripped

    def _strip_now(self, changes: Sequence[Stripping]) -> int:
        """Replace the payloads in one transaction, with freed space zeroed.

        Raises:
            Busy: Another connection holds the write lock; nothing was done.
            StoreError: The transaction failed; nothing was changed.
        """
        self._writer.execute("PRAGMA secure_delete = ON")
        try:
            db = self._begin()
            try:
                stripped = sum(
                    db.execute(STRIP, (change.new, change.position, change.old)).rowcount
                    for change in changes
                )
                db.execute("COMMIT")
            except BaseException as exc:
                self._roll_back_after(exc, "redact in")
                raise
        finally:
            self._writer.execute("PRAGMA secure_delete = OFF")
        return stripped

    def _checkpoint(self) -> None:
        """Copy the write-ahead log into the database file and empty it (the old bytes go).

        Raises:
            Busy: Another process's open read (or write) keeps the log in use: the runner
                retries, without holding up the event loop, for as long as it waits for a lock.
            StoreError: The checkpoint failed.
        """
        try:
            busy = self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.Error as exc:
            raise StoreError(f"checkpointing {self.path} failed: {exc}") from exc
        if busy:
            raise Busy


__all__ = ["REDACTIONS", "STRIP", "SqliteRedaction"]
