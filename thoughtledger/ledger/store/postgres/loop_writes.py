"""A fold's loop marks written on PostgreSQL: one transaction on a writer connection.

The marks' position row is locked first (``FOR UPDATE``): the marks are written, and the
position moved, only if it is still where the fold started, and two folders of one ledger take
turns (the loser finds the position moved and writes nothing; the winner's marks are the same).
"""

from collections.abc import Sequence
from typing import Any

from thoughtledger.ledger.store.loop_marks import FoldedMarks

_LOCK = "SELECT position FROM tl_loops_through WHERE id = 1 FOR UPDATE"
_DELETE_AFTER = (
    "DELETE FROM tl_loops l USING unnest($1::text[], $2::int[]) AS f(session_id, after_version) "
    "WHERE l.session_id = f.session_id AND l.version > f.after_version"
)
_INSERT = (
    "INSERT INTO tl_loops (session_id, version, repeats_version, similarity) "
    "SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::float8[])"
)
_MOVE = "UPDATE tl_loops_through SET position = $1 WHERE id = 1"


async def fold_loop_marks(
    driver: Any, through: int, to: int, folded: Sequence[FoldedMarks]
) -> bool:
    """Write a fold's marks and move the position, if it is still ``through``.

    Raises:
        Exception: The driver's errors, for the caller to translate.
    """
    marks = [(item.session_id, mark) for item in folded for mark in item.marks]
    async with driver.transaction():
        if await driver.fetchval(_LOCK) != through:
            return False
        if folded:
            await driver.execute(
                _DELETE_AFTER,
                [item.session_id for item in folded],
                [item.after_version for item in folded],
            )
        if marks:
            await driver.execute(
                _INSERT,
                [session_id for session_id, _ in marks],
                [mark.version for _, mark in marks],
                [mark.repeats_version for _, mark in marks],
                [mark.similarity for _, mark in marks],
            )
        await driver.execute(_MOVE, to)
    return True


__all__ = ["fold_loop_marks"]
