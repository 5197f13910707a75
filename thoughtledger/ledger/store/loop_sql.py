"""The loop marks of the SQL backends: their reads (schema step 10 is in ``schema``).

Step 10 creates ``tl_loops`` and ``tl_loops_behind`` (see
:mod:`thoughtledger.ledger.store.loop_marks`), lists every session already in the log as behind
(SQL cannot compare texts; the facade marks them at the ledger's first writable opening, see
:mod:`thoughtledger.api.loop_marker`), and creates the ``tl_session_loops`` view: one row
per session with its repeats and whether its marks are current (:data:`.SESSION_LOOP_COLUMNS`).
The writes are each backend's: an append's marks go in its own transaction (SQLite's group
commit, PostgreSQL's one statement), as do an import's and a redaction's listing as behind.
"""

from collections.abc import Awaitable, Callable
from typing import Any

import sqlalchemy as sa

from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.store import schema
from thoughtledger.ledger.store.loop_marks import LoopCounts, LoopMark
from thoughtledger.ledger.store.sql_stats import StatsDialect, selected_sessions
from thoughtledger.ledger.store.stats_rows import StatsFilter

_L = schema.loops
_B = schema.loops_behind
_S = schema.sessions

Fetch = Callable[["sa.Executable"], Awaitable[list[Any]]]


def _missing(exc: StoreError) -> bool:
    """Whether ``exc`` says the marks' tables are not there (an older ledger, read-only)."""
    return "tl_loops" in str(exc)


async def read_marks(fetch: Fetch, session_id: str) -> list[LoopMark]:
    """The stored marks of a session, in version order.

    Raises:
        StoreError: The backend failed, or the ledger predates marks (read-only).
    """
    rows = await fetch(
        sa.select(_L.c.version, _L.c.repeats_version, _L.c.similarity)
        .where(_L.c.session_id == session_id)
        .order_by(_L.c.version)
    )
    return [LoopMark(int(row[0]), int(row[1]), float(row[2])) for row in rows]


async def read_behind(fetch: Fetch, after: str, limit: int) -> list[str]:
    """Ids of sessions behind on their marks, in id order, after ``after``.

    Raises:
        StoreError: The backend failed, or the ledger predates marks (read-only).
    """
    rows = await fetch(
        sa.select(_B.c.session_id)
        .where(_B.c.session_id > after)
        .order_by(_B.c.session_id)
        .limit(limit)
    )
    return [str(row[0]) for row in rows]


async def count_marks(fetch: Fetch, dialect: StatsDialect, where: StatsFilter) -> LoopCounts | None:
    """The stored marks counted over the sessions ``where`` selects (``None``: no marks kept).

    Three short statements: the sessions selected (counted from ``tl_sessions``), the repeats
    per selected session (``tl_loops`` by its key), and the selected sessions behind.

    Raises:
        StoreError: The backend failed.
    """
    sessions = await fetch(
        sa.select(sa.func.count())
        .select_from(_S)
        .where(*selected_sessions(dialect, where, _S.c.session_id))
    )
    try:
        repeats = await fetch(
            sa.select(_L.c.session_id, sa.func.count())
            .where(*selected_sessions(dialect, where, _L.c.session_id))
            .group_by(_L.c.session_id)
        )
        behind = await fetch(
            sa.select(_B.c.session_id)
            .where(*selected_sessions(dialect, where, _B.c.session_id))
            .order_by(_B.c.session_id)
        )
    except StoreError as exc:
        if _missing(exc):
            return None
        raise
    return LoopCounts(
        int(sessions[0][0]),
        {str(row[0]): int(row[1]) for row in repeats},
        tuple(str(row[0]) for row in behind),
    )


__all__ = ["count_marks", "read_behind", "read_marks"]
