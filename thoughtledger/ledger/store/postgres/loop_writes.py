"""The loop marks' writes on PostgreSQL: in an append's one statement, and a session's afresh.

An append's marks (or its session's listing as behind) are a CTE of the append's statement (see
:mod:`thoughtledger.ledger.store.postgres.append`), so they commit with its events. A session's
marks written afresh take one transaction on a writer connection:

The session's head row is locked first (``FOR UPDATE``, as an append's upsert locks it), so the
marks are written only for the version they were found over and no append interleaves.
"""

from collections.abc import Sequence
from typing import Any

from thoughtledger.ledger.store.loop_marks import LoopMark

# Written only if the head moved (FROM head); a data-modifying CTE runs whether or not the main
# statement reads it.
MARKS_CTE = """,
marks AS (
    INSERT INTO tl_loops (session_id, version, repeats_version, similarity)
    SELECT $1, m.version, m.repeats_version, m.similarity
    FROM head, unnest($14::int[], $15::int[], $16::float8[]) AS m(version, repeats_version,
                                                                  similarity)
)"""
"""The CTE of an append whose marks hold repeats ($14-$16: their versions, the versions they
repeat, their similarities)."""
BEHIND_CTE = """,
behind AS (
    INSERT INTO tl_loops_behind (session_id) SELECT $1 FROM head ON CONFLICT DO NOTHING
)"""
"""The CTE of an append given no marks: its session is listed as behind on them."""


_LOCK_HEAD = "SELECT version FROM tl_sessions WHERE session_id = $1 FOR UPDATE"
_DELETE_MARKS = "DELETE FROM tl_loops WHERE session_id = $1"
_INSERT_MARKS = (
    "INSERT INTO tl_loops (session_id, version, repeats_version, similarity) "
    "SELECT $1, m.v, m.r, m.s FROM unnest($2::int[], $3::int[], $4::float8[]) AS m(v, r, s)"
)
_NOT_BEHIND = "DELETE FROM tl_loops_behind WHERE session_id = $1"


async def mark_loops(driver: Any, session_id: str, version: int, marks: Sequence[LoopMark]) -> bool:
    """Replace the session's marks if it is still at ``version``; whether they were written.

    Raises:
        Exception: The driver's errors, for the caller to translate.
    """
    async with driver.transaction():
        head = await driver.fetchval(_LOCK_HEAD, session_id)
        if (head or 0) != version:
            return False
        await driver.execute(_DELETE_MARKS, session_id)
        await driver.execute(
            _INSERT_MARKS,
            session_id,
            [mark.version for mark in marks],
            [mark.repeats_version for mark in marks],
            [mark.similarity for mark in marks],
        )
        await driver.execute(_NOT_BEHIND, session_id)
    return True


__all__ = ["BEHIND_CTE", "MARKS_CTE", "mark_loops"]
