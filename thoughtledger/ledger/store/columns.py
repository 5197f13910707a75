"""The analytics views' names and columns, and how they read values no column can hold.

Kept apart from the views' SQL (:mod:`thoughtledger.ledger.store.sql_views`, which needs SQLAlchemy)
so that the exports, which fold the same rows in Python, import no database library.
"""

THOUGHTS_VIEW = "tl_thoughts"
"""The name of the view with one row per thought."""
SESSIONS_VIEW = "tl_session_stats"
"""The name of the view with one row per session."""

THOUGHT_COLUMNS: tuple[str, ...] = (
    "position",
    "session_id",
    "version",
    "recorded_at",
    "agent",
    "client",
    "kind",
    "thought_number",
    "total_thoughts",
    "next_thought_needed",
    "thought",
    "is_revision",
    "revises_thought",
    "branch_from_thought",
    "branch_id",
    "needs_more_thoughts",
    "model",
    "provider",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "latency_ms",
    "redacted",
)
"""The columns of ``tl_thoughts``, in order (documented in the README). ``thought`` is ``NULL``
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
)
"""The columns of ``tl_session_stats``, in order (documented in the README)."""


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

__all__ = [
    "LARGEST_COUNT",
    "NUL_ESCAPE",
    "NUL_STANDIN",
    "SESSIONS_VIEW",
    "SESSION_COLUMNS",
    "THOUGHTS_VIEW",
    "THOUGHT_COLUMNS",
]
