"""A session's loop marks written afresh on SQLite, between group commits, in one transaction.

The head is read under the write lock, so the marks are written only for the version they were
found over: an append that slipped in first leaves everything as it was (the caller finds the
session behind again later).
"""

from collections.abc import Sequence

from thoughtledger.ledger.store.loop_marks import LoopMark
from thoughtledger.ledger.store.sqlite.batch import INSERT_LOOP, SELECT_HEAD
from thoughtledger.ledger.store.sqlite.writer import SqliteWriter

_DELETE_MARKS = "DELETE FROM tl_loops WHERE session_id = ?"
_NOT_BEHIND = "DELETE FROM tl_loops_behind WHERE session_id = ?"


async def mark_loops(
    writer: SqliteWriter, session_id: str, version: int, marks: Sequence[LoopMark]
) -> bool:
    """Replace the session's marks if it is still at ``version``; whether they were written.

    Raises:
        StoreError: The store is closed or read-only, or the transaction failed.
        StoreUnavailableError: Another writer kept the lock; nothing was written.
    """
    return await writer.between_commits(
        lambda: _mark_now(writer, session_id, version, marks), "no loop marks were written"
    )


def _mark_now(
    writer: SqliteWriter, session_id: str, version: int, marks: Sequence[LoopMark]
) -> bool:
    db = writer.begin()
    try:
        row = db.execute(SELECT_HEAD, {"session_id": session_id}).fetchone()
        if (row[0] if row else 0) != version:
            db.execute("ROLLBACK")
            return False
        db.execute(_DELETE_MARKS, (session_id,))
        db.executemany(INSERT_LOOP, [(session_id, *mark) for mark in marks])
        db.execute(_NOT_BEHIND, (session_id,))
        db.execute("COMMIT")
    except BaseException as exc:
        writer.roll_back_after(exc, "mark loops in")
        raise
    return True


__all__ = ["mark_loops"]
