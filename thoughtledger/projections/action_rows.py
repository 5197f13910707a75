"""One flat row per action an agent took, folded from the log: what the ``tl_actions`` view answers.

The CSV and Parquet exports of actions use this fold rather than the view, so that they work the
same on every backend (the in-memory store has no SQL) and on a ledger whose schema predates the
view. The columns are :data:`ACTION_COLUMNS`; a test holds fold and view equal. Like
:mod:`thoughtledger.projections.thought_rows`, it reads stored rows undecoded, page by page, and
remembers only each session's agent and client.
"""

from typing import Any

from thoughtledger.ledger.events import ACTION_TYPE
from thoughtledger.ledger.store.columns import ACTION_COLUMN_TYPES, ACTION_COLUMNS
from thoughtledger.projections.annotation_rows import EventRowFold
from thoughtledger.projections.thought_rows import view_count

ActionRow = tuple[Any, ...]
"""One row of :data:`ACTION_COLUMNS`."""


class ActionRowFold(EventRowFold):
    """Turns pages of log rows (in position order) into action rows, one page at a time."""

    event_type = ACTION_TYPE

    def _columns(self, payload: Any) -> tuple[Any, ...]:
        return (
            view_count(payload.get("after_thought")),
            payload["name"],
            payload.get("call_id"),
            payload.get("arguments"),
            bool(payload.get("arguments_cut")),
            payload["trace_id"],
            payload["span_id"],
        )


assert len(ACTION_COLUMN_TYPES) == len(ACTION_COLUMNS) == 13  # noqa: S101  # 6 opening columns, 7 above

__all__ = ["ACTION_COLUMNS", "ACTION_COLUMN_TYPES", "ActionRow", "ActionRowFold"]
