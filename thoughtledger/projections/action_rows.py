"""One flat row per action an agent took, folded from the log: what the ``tl_actions`` view answers.

The CSV and Parquet exports of actions use this fold rather than the view, so that they work the
same on every backend (the in-memory store has no SQL) and on a ledger whose schema predates the
view. The columns are :data:`ACTION_COLUMNS`; a test holds fold and view equal. Like
:mod:`thoughtledger.projections.thought_rows`, it reads stored rows undecoded, page by page, and
remembers only each session's agent and client.
"""

from typing import Any

from thoughtledger.ledger.envelope import LogRow
from thoughtledger.ledger.events import ACTION_TYPE
from thoughtledger.ledger.store.columns import ACTION_COLUMN_TYPES, ACTION_COLUMNS, LARGEST_COUNT
from thoughtledger.projections.annotation_rows import EventRowFold

ActionRow = tuple[Any, ...]
"""One row of :data:`ACTION_COLUMNS`."""


class ActionRowFold(EventRowFold):
    """Turns pages of log rows (in position order) into action rows, one page at a time."""

    event_type = ACTION_TYPE

    def _row(self, row: LogRow, payload: Any, opener: tuple[str | None, str | None]) -> ActionRow:
        after = payload.get("after_thought")
        return (
            row.position,
            row.session_id,
            row.version,
            row.recorded_at,
            *opener,
            after if type(after) is int and after <= LARGEST_COUNT else None,
            payload["name"],
            payload.get("call_id"),
            payload.get("arguments"),
            bool(payload.get("arguments_cut")),
            payload["trace_id"],
            payload["span_id"],
        )


assert len(ACTION_COLUMN_TYPES) == len(ACTION_COLUMNS) == 13  # noqa: S101  # the row above

__all__ = ["ACTION_COLUMNS", "ACTION_COLUMN_TYPES", "ActionRow", "ActionRowFold"]
