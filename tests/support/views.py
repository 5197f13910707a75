"""Reading the analytics views back as any SQL tool would: plain SQL on the backing database."""

from datetime import datetime
from typing import Any

from tests.support.backends import Backend
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.store.columns import (
    ACTION_COLUMNS,
    ACTIONS_VIEW,
    ANNOTATION_COLUMNS,
    ANNOTATIONS_VIEW,
    SESSION_COLUMNS,
    SESSION_LOOP_COLUMNS,
    SESSION_LOOPS_VIEW,
    SESSIONS_VIEW,
    THOUGHT_COLUMNS,
    THOUGHTS_VIEW,
)

_COLUMNS = {
    THOUGHTS_VIEW: THOUGHT_COLUMNS,
    SESSIONS_VIEW: SESSION_COLUMNS,
    ANNOTATIONS_VIEW: ANNOTATION_COLUMNS,
    ACTIONS_VIEW: ACTION_COLUMNS,
    SESSION_LOOPS_VIEW: SESSION_LOOP_COLUMNS,
    "tl_loops": ("session_id", "version", "repeats_version", "similarity"),
}

_BOOLEANS = {
    "next_thought_needed",
    "is_revision",
    "needs_more_thoughts",
    "completed",
    "redacted",
    "marks_current",
    "arguments_cut",
}


def _plain(name: str, value: Any) -> Any:
    """A value as the fold gives it: SQLite's 0/1 as booleans, PostgreSQL's times as text."""
    if value is None:
        return None
    if name in _BOOLEANS:
        return bool(value)
    if isinstance(value, datetime):
        return format_time(value)
    return value


async def view_rows(backend: Backend, view: str, order: str) -> list[dict[str, Any]]:
    """Every row of ``view`` (``tl_thoughts``, ``tl_session_stats``, ``tl_annotations``, ...)."""
    query = f"SELECT * FROM {view} ORDER BY {order}"  # noqa: S608  # names from the tests
    names, rows = await backend.select(query)
    assert tuple(names) == _COLUMNS[view]
    return [{n: _plain(n, v) for n, v in zip(names, row, strict=True)} for row in rows]


async def view_column(backend: Backend, view: str, column: str, order: str) -> list[Any]:
    """One column of ``view`` as stored (SQLite's booleans 0/1), even one the tests do not list."""
    query = f"SELECT {column} FROM {view} ORDER BY {order}"  # noqa: S608  # names from the tests
    return [value for (value,) in (await backend.select(query))[1]]


def as_dicts(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Thought rows of the fold, keyed by column, as :func:`view_rows` gives them."""
    return [{n: _plain(n, v) for n, v in zip(THOUGHT_COLUMNS, row, strict=True)} for row in rows]
