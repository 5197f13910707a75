"""A fold's loop marks written on SQLite, between group commits, in one transaction.

The marks' position is read under the write lock: the marks are written, and the position
moved, only if it is still where the fold started (another process folding the same ledger may
have moved it first; its marks are the same, found from the same log).
"""

from collections.abc import Sequence

from thoughtledger.ledger.store.loop_marks import FoldedMarks
from thoughtledger.ledger.store.sqlite.statements import STATEMENTS
from thoughtledger.ledger.store.sqlite.writer import SqliteWriter

THROUGH = "SELECT position FROM tl_loops_through WHERE id = 1"
_INSERT = STATEMENTS["insert_loop"]
_DELETE_AFTER = "DELETE FROM tl_loops WHERE session_id = ? AND version > ?"
_MOVE = "UPDATE tl_loops_through SET position = ? WHERE id = 1"


async def fold_loop_marks(
    writer: SqliteWriter, through: int, to: int, folded: Sequence[FoldedMarks]
) -> bool:
    """Write a fold's marks and move the position, if it is still ``through``.

    Raises:
        StoreError: The store is closed or read-only, or the transaction failed.
        StoreUnavailableError: Another writer kept the lock; nothing was written.
    """
    return await writer.between_commits(
        lambda: _fold_now(writer, through, to, folded), "no loop marks were written"
    )


def _fold_now(writer: SqliteWriter, through: int, to: int, folded: Sequence[FoldedMarks]) -> bool:
    connection = writer.connection
    # Derived from the log, as the search index is: committed without an fsync of its own (a
    # power loss takes back the marks and their position together; the next fold redoes them).
    synchronous = connection.execute("PRAGMA synchronous").fetchone()[0]
    connection.execute("PRAGMA synchronous = NORMAL")
    try:
        db = writer.begin()
        try:
            if db.execute(THROUGH).fetchone()[0] != through:
                db.execute("ROLLBACK")
                return False
            for item in folded:
                db.execute(_DELETE_AFTER, (item.session_id, item.after_version))
                db.executemany(_INSERT, [(item.session_id, *mark) for mark in item.marks])
            db.execute(_MOVE, (to,))
            db.execute("COMMIT")
        except BaseException as exc:
            writer.roll_back_after(exc, "write the loop marks of")
            raise
    finally:
        connection.execute(f"PRAGMA synchronous = {int(synchronous)}")
    return True


__all__ = ["THROUGH", "fold_loop_marks"]
