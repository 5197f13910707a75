"""The analytics views' names and columns, and how they read values no column can hold.

Kept apart from the views' SQL (:mod:`thoughtledger.ledger.store.sql_views`, which needs SQLAlchemy)
so that the exports, which fold the same rows in Python, import no database library.
"""

from collections.abc import Sequence

from thoughtledger.ledger.thought import ColumnType, ThoughtField, in_order

THOUGHTS_VIEW = "tl_thoughts"
"""The name of the view with one row per thought."""
SESSIONS_VIEW = "tl_session_stats"
"""The name of the view with one row per session."""
ANNOTATIONS_VIEW = "tl_annotations"
"""The name of the view with one row per annotation of a thought."""
ACTIONS_VIEW = "tl_actions"
"""The name of the view with one row per action an agent took (a captured tool call)."""

VIEW_CORE_ORDER = ("thought_number", "total_thoughts", "next_thought_needed", "thought")
"""Where the view puts the core fields of a thought (its marks follow them)."""

THOUGHT_FIELD_COLUMNS: tuple[ThoughtField, ...] = in_order(VIEW_CORE_ORDER)
"""A thought's own fields as columns of ``tl_thoughts``, from the definition of a thought."""

THOUGHT_COLUMN_TYPES: dict[str, ColumnType | str] = {
    "position": "int64",
    "session_id": "string",
    "version": "int64",
    "recorded_at": "timestamp",
    "agent": "string",
    "client": "string",
    "kind": "string",
    **{field.name: field.column_type for field in THOUGHT_FIELD_COLUMNS},
    "model": "string",
    "provider": "string",
    "prompt_tokens": "int64",
    "completion_tokens": "int64",
    "cost": "float64",
    "latency_ms": "int64",
    "redacted": "bool",
}
"""Each column of ``tl_thoughts`` and its type (Parquet's names), in order: the envelope, the
thought's fields (a new field of a thought is a new column after the last mark), the model's
usage, and whether the text was redacted."""

THOUGHT_COLUMNS: tuple[str, ...] = tuple(THOUGHT_COLUMN_TYPES)
"""The columns of ``tl_thoughts``, in order (see docs/analytics.md). ``thought`` is ``NULL``
for a thought whose text was redacted, and ``redacted`` true."""

SESSION_COLUMNS: tuple[str, ...] = (
    "session_id",
    "started_at",
    "updated_at",
    "agent",
    "client",
    "status",
    "events",
    "thoughts",
    "revisions",
    "branches",
    "generated",
    "first_estimate",
    "last_estimate",
    "estimate_drift",
    "completed",
    "duration_ms",
    "thinking_ms",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "fork_of",
    "fork_version",
)
"""The columns of ``tl_session_stats``, in order (see docs/analytics.md). ``fork_of`` and
``fork_version`` name a fork's source and the version it starts from (``NULL`` for a session
that is no fork); a fork's counts are its own events'."""

SESSION_LOOPS_VIEW = "tl_session_loops"
"""The view of repeats per session (schema step 10; marks' currency from step 12)."""

SESSION_LOOP_COLUMNS: tuple[str, ...] = ("session_id", "repeats", "marks_current")
"""The columns of ``tl_session_loops``: every session, its stored repeats (0 when none), and
whether its marks cover every thought (false while it has events after ``tl_loops_through``)."""

ANNOTATION_COLUMN_TYPES: dict[str, ColumnType | str] = {
    "position": "int64",
    "session_id": "string",
    "version": "int64",
    "recorded_at": "timestamp",
    "agent": "string",
    "client": "string",
    "thought_number": "int64",
    "label": "string",
    "score": "float64",
    "note": "string",
    "annotated_by": "string",
    "redacted": "bool",
}
"""Each column of ``tl_annotations`` and its type (Parquet's names), in order."""

ANNOTATION_COLUMNS: tuple[str, ...] = tuple(ANNOTATION_COLUMN_TYPES)
"""The columns of ``tl_annotations``, in order (see docs/analytics.md). ``note`` is ``NULL``
when none was given or it was redacted (``redacted`` says which); ``annotated_by`` is who
annotated (``NULL``: the ledger's own user, unnamed)."""

ACTION_COLUMN_TYPES: dict[str, ColumnType | str] = {
    "position": "int64",
    "session_id": "string",
    "version": "int64",
    "recorded_at": "timestamp",
    "agent": "string",
    "client": "string",
    "after_thought": "int64",
    "name": "string",
    "call_id": "string",
    "arguments": "string",
    "arguments_cut": "bool",
    "trace_id": "string",
    "span_id": "string",
}
"""Each column of ``tl_actions`` and its type (Parquet's names), in order."""

ACTION_COLUMNS: tuple[str, ...] = tuple(ACTION_COLUMN_TYPES)
"""The columns of ``tl_actions``, in order (see docs/analytics.md). ``after_thought`` is the
number of the thought the action followed (``NULL`` when none came before it); ``arguments``
the call's arguments as sent (JSON text, cut at the ledger's bound when ``arguments_cut``)."""


LARGEST_COUNT = 10**18 - 1
"""The largest count the views show (larger ones read as ``NULL``)."""

NUL_ESCAPE = "\\u0000"
"""How a NUL character is written in a stored payload (JSON's escape)."""
NUL_STANDIN = "\\ufffd"
"""What the views read it as: U+FFFD. PostgreSQL's text cannot hold NUL (reading one fails the
whole query) and SQLite's JSON functions cut a string short at one; so text values are read
from the payload with every NUL escape replaced, on both backends and in the fold alike. (The
replacement is textual: a thought holding the six characters backslash-u-0-0-0-0 reads with
them as U+FFFD's escape too.)"""


def views_current(thought_columns: Sequence[str]) -> bool:
    """Whether a database's ``tl_thoughts`` has this code's columns (the definition's fields).

    A new field of a thought is a new column of the view, with no schema step of its own: a
    writable opening compares the view's columns with :data:`THOUGHT_COLUMNS` and, where they
    differ (or the view is missing), re-creates the views
    (:func:`~thoughtledger.ledger.store.schema_steps.refreshed_views`). Views hold no rows, so
    this is instant on any ledger. Here, not beside the views' SQL, because the check runs on every
    opening's fast path, which imports no SQLAlchemy.
    """
    return tuple(thought_columns) == THOUGHT_COLUMNS


__all__ = [
    "ACTIONS_VIEW",
    "ACTION_COLUMNS",
    "ACTION_COLUMN_TYPES",
    "ANNOTATIONS_VIEW",
    "ANNOTATION_COLUMNS",
    "ANNOTATION_COLUMN_TYPES",
    "LARGEST_COUNT",
    "NUL_ESCAPE",
    "NUL_STANDIN",
    "SESSIONS_VIEW",
    "SESSION_COLUMNS",
    "SESSION_LOOPS_VIEW",
    "SESSION_LOOP_COLUMNS",
    "THOUGHTS_VIEW",
    "THOUGHT_COLUMNS",
    "THOUGHT_COLUMN_TYPES",
    "THOUGHT_FIELD_COLUMNS",
    "VIEW_CORE_ORDER",
    "views_current",
]
