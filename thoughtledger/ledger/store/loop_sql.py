"""The loop marks of the SQL backends: their reads (schema steps 10 and 12 are in ``schema``).

Step 10 created ``tl_loops``; step 12 added ``tl_loops_through``, the position up to which the
marks took in every event (see :mod:`thoughtledger.ledger.store.loop_marks`), and made the
``tl_session_loops`` view say a session's marks are current when its last event lies at or
before it (:data:`~thoughtledger.ledger.store.columns.SESSION_LOOP_COLUMNS`). The writes are
each backend's: one transaction per fold, guarded by the position.
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
_T = schema.loops_through
_E = schema.events
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


def _through() -> "sa.ScalarSelect[Any]":
    return sa.select(_T.c.position).where(_T.c.id == 1).scalar_subquery()


async def read_through(fetch: Fetch) -> int:
    """The marks' position (0 when the ledger keeps none: an older one, opened read-only).

    Raises:
        StoreError: The backend failed.
    """
    try:
        rows = await fetch(sa.select(_T.c.position).where(_T.c.id == 1))
    except StoreError as exc:
        if _missing(exc):
            return 0
        raise
    return int(rows[0][0]) if rows else 0


async def count_marks(fetch: Fetch, dialect: StatsDialect, where: StatsFilter) -> LoopCounts | None:
    """The stored marks counted over the sessions ``where`` selects (``None``: no marks kept).

    Three short statements: the sessions selected (counted from ``tl_sessions``), the selected
    sessions with events after the marks' position (a range of the log's key: as short as the
    fold's lag), and the repeats per selected session (``tl_loops`` by its key).

    Raises:
        StoreError: The backend failed.
    """
    sessions = await fetch(
        sa.select(sa.func.count())
        .select_from(_S)
        .where(*selected_sessions(dialect, where, _S.c.session_id))
    )
    try:
        # The sessions behind first: a fold that commits between the two reads only moves
        # sessions forward, so a session not behind then has every mark stored when counted.
        behind = await fetch(
            sa.select(_E.c.session_id)
            .where(_E.c.position > _through(), *selected_sessions(dialect, where, _E.c.session_id))
            .group_by(_E.c.session_id)
            .order_by(_E.c.session_id)
        )
        repeats = await fetch(
            sa.select(_L.c.session_id, sa.func.count())
            .where(*selected_sessions(dialect, where, _L.c.session_id))
            .group_by(_L.c.session_id)
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


__all__ = ["count_marks", "read_marks", "read_through"]
