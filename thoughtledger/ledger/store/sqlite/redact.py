"""The SQLite backend's removal of redacted texts (see :mod:`thoughtledger.ledger.store.redaction`).

Run on the writer connection between group commits, like an import. SQLite leaves a replaced
value's bytes in the file (in the page's free space, and in the write-ahead log's older frames)
until they are written over, so the replacement runs with ``PRAGMA secure_delete = ON`` (freed
space is zeroed) and is followed by ``PRAGMA wal_checkpoint(TRUNCATE)``: the new pages are copied
into the database file and the write-ahead log is emptied, so neither file holds the text. The
search index's triggers remove the text's words, and the index is then rewritten in the same
transaction, so that no old segment of it keeps them either.
"""

import sqlite3
from collections.abc import Sequence

from thoughtledger.ledger.errors import StoreError, StoreUnavailableError
from thoughtledger.ledger.store.redaction import Stripping
from thoughtledger.ledger.store.sqlite.writer import Busy, SqliteWriter

STRIP = "UPDATE tl_events SET payload = ? WHERE position = ? AND payload = ?"
PURGE = "INSERT INTO tl_search(tl_search) VALUES ('optimize')"
"""Rewrite the search index (:mod:`thoughtledger.ledger.store.search_index`) into one segment."""


async def strip(writer: SqliteWriter, changes: Sequence[Stripping]) -> int:
    """Replace each payload still stored as ``old`` by ``new``, then empty the write-ahead log.

    Returns:
        How many payloads were replaced.

    Raises:
        StoreError: The store is closed or read-only, the write failed (nothing was changed),
            or another process kept the write-ahead log in use (the text is gone from every
            read, but not yet from the log).
        StoreUnavailableError: Another writer kept the lock; nothing was changed.
    """
    stripped = await writer.between_commits(
        lambda: _strip_now(writer, changes), "nothing was redacted, try again"
    )
    try:
        await writer.between_commits(lambda: _checkpoint(writer), "")
    except StoreUnavailableError:
        raise StoreError(
            f"another process kept the write-ahead log of {writer.path} in use: the redacted "
            "text is gone from every read, but its old bytes stay in the log until the next "
            "checkpoint; run redact again when no other process reads the ledger"
        ) from None
    return stripped


def _strip_now(writer: SqliteWriter, changes: Sequence[Stripping]) -> int:
    """Replace the payloads in one transaction, with freed space zeroed.

    Raises:
        Busy: Another connection holds the write lock; nothing was done.
        StoreError: The transaction failed; nothing was changed.
    """
    writer.connection.execute("PRAGMA secure_delete = ON")
    try:
        db = writer.begin()
        try:
            stripped = sum(
                db.execute(STRIP, (change.new, change.position, change.old)).rowcount
                for change in changes
            )
            if stripped:
                # The search index's triggers took the text out; this rewrites the index so
                # that its words leave the old segments' pages too (zeroed, as above).
                db.execute(PURGE)
            db.execute("COMMIT")
        except BaseException as exc:
            writer.roll_back_after(exc, "redact in")
            raise
    finally:
        writer.connection.execute("PRAGMA secure_delete = OFF")
    return stripped


def _checkpoint(writer: SqliteWriter) -> None:
    """Copy the write-ahead log into the database file and empty it (the old bytes go).

    Raises:
        Busy: Another process's open read (or write) keeps the log in use: the runner
            retries, without holding up the event loop, for as long as it waits for a lock.
        StoreError: The checkpoint failed.
    """
    try:
        busy = writer.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    except sqlite3.Error as exc:
        raise StoreError(f"checkpointing {writer.path} failed: {exc}") from exc
    if busy:
        raise Busy


__all__ = ["PURGE", "STRIP", "strip"]
