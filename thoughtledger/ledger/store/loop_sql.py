"""The loop marks of the SQL backends: their reads (schema steps 10 and 12 are in ``schema``).

Step 10 created ``tl_loops``; step 12 added ``tl_loops_through``, the position up to which the
marks took in every event (see :mod:`thoughtledger.ledger.store.loop_marks`), and made the
``tl_session_loops`` view say a session's marks are current when its last event lies at or
before it (:data:`~thoughtledger.ledger.store.columns.SESSION_LOOP_COLUMNS`). The writes are
each backend's: one transaction per fold, guarded by the position.
"""

from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.store.loop_marks import LoopCounts, LoopMark
from thoughtledger.ledger.store.sql_stats import FetchSql, StatsDialect, selected_sessions
from thoughtledger.ledger.store.stats_rows import StatsFilter

_MARKS = (
    "SELECT version, repeats_version, similarity FROM tl_loops WHERE session_id = :session_id "
    "ORDER BY version"
)
_THROUGH = "SELECT position FROM tl_loops_through WHERE id = 1"


def _missing(exc: StoreError) -> bool:
    """Whether ``exc`` says the marks' tables are not there (an older ledger, read-only)."""
    return "tl_loops" in str(exc)


async def read_marks(fetch: FetchSql, session_id: str) -> list[LoopMark]:
    """The stored marks of a session, in version order.

    Raises:
        StoreError: The backend failed, or the ledger predates marks (read-only).
    """
    rows = await fetch(_MARKS, {"session_id": session_id})
    return [LoopMark(int(row[0]), int(row[1]), float(row[2])) for row in rows]


async def read_through(fetch: FetchSql) -> int:
    """The marks' position (0 when the ledger keeps none: an older one, opened read-only).

    Raises:
        StoreError: The backend failed.
    """
    try:
        rows = await fetch(_THROUGH, {})
    except StoreError as exc:
        if _missing(exc):
            return 0
        raise
    return int(rows[0][0]) if rows else 0


async def count_marks(
    fetch: FetchSql, dialect: StatsDialect, where: StatsFilter
) -> LoopCounts | None:
    """The stored marks counted over the sessions ``where`` selects (``None``: no marks kept).

    Three short statements: the sessions selected (their first events counted), the selected
    sessions with events after the marks' position (a range of the log's key: as short as the
    fold's lag), and the repeats per selected session (``tl_loops`` by its key).

    Raises:
        StoreError: The backend failed.
    """
    params: dict[str, object] = {}

    def chosen(column: str, *more: str) -> str:
        conditions = [*more, *selected_sessions(dialect, where, column, params)]
        return f" WHERE {' AND '.join(conditions)}" if conditions else ""

    # Every statement's values are the filters', bound (see selected_sessions).
    first = "tl_events.version = 1"  # a session is counted by its first event
    counted = f"SELECT count(*) FROM tl_events{chosen('tl_events.session_id', first)}"  # noqa: S608
    late = f"tl_events.position > ({_THROUGH})"
    behind_sql = (
        f"SELECT session_id FROM tl_events{chosen('tl_events.session_id', late)} "  # noqa: S608
        "GROUP BY session_id ORDER BY session_id"
    )
    repeats_sql = (
        "SELECT session_id, count(*) FROM tl_loops"  # noqa: S608
        f"{chosen('tl_loops.session_id')} GROUP BY session_id"
    )
    sessions = await fetch(counted, params)
    try:
        # The sessions behind first: a fold that commits between the two reads only moves
        # sessions forward, so a session not behind then has every mark stored when counted.
        behind = await fetch(behind_sql, params)
        repeats = await fetch(repeats_sql, params)
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
