"""One flat row per action an agent took, folded from the log: what the ``tl_actions`` view answers.

The CSV and Parquet exports of actions use this fold rather than the view, so that they work the
same on every backend (the in-memory store has no SQL) and on a ledger whose schema predates the
view. The columns are :data:`ACTION_COLUMNS`; a test holds fold and view equal. Like
:mod:`thoughtledger.projections.thought_rows`, it reads stored rows undecoded, page by page, and
remembers only each session's agent and client.
"""

from collections.abc import Iterable
from typing import Any

import orjson

from thoughtledger.ledger.envelope import LogRow
from thoughtledger.ledger.errors import EventDecodingError
from thoughtledger.ledger.events import ACTION_TYPE
from thoughtledger.ledger.store.columns import ACTION_COLUMN_TYPES, ACTION_COLUMNS, LARGEST_COUNT
from thoughtledger.projections.thought_rows import view_payload

ActionRow = tuple[Any, ...]
"""One row of :data:`ACTION_COLUMNS`."""


class ActionRowFold:
    """Turns pages of log rows (in position order) into action rows, one page at a time."""

    def __init__(self) -> None:
        self._openers: dict[str, tuple[str | None, str | None]] = {}

    def fold(self, rows: Iterable[LogRow]) -> list[ActionRow]:
        """Return the action rows of ``rows``, which continue the pages folded before.

        Raises:
            EventDecodingError: A stored payload is not a JSON object (a damaged ledger).
        """
        try:
            return self._fold(rows)
        except (orjson.JSONDecodeError, AttributeError, KeyError) as exc:
            raise EventDecodingError(f"a stored payload is malformed: {exc}") from exc

    def _fold(self, rows: Iterable[LogRow]) -> list[ActionRow]:
        out: list[ActionRow] = []
        for row in rows:
            if row.event_type == "session.started" and row.version == 1:
                metadata = view_payload(row.payload).get("metadata") or {}
                self._openers[row.session_id] = (metadata.get("agent"), metadata.get("client"))
                continue
            if row.event_type != ACTION_TYPE:
                continue
            payload = view_payload(row.payload)
            after = payload.get("after_thought")
            out.append(
                (
                    row.position,
                    row.session_id,
                    row.version,
                    row.recorded_at,
                    *self._openers.get(row.session_id, (None, None)),
                    after if type(after) is int and after <= LARGEST_COUNT else None,
                    payload["name"],
                    payload.get("call_id"),
                    payload.get("arguments"),
                    bool(payload.get("arguments_cut")),
                    payload["trace_id"],
                    payload["span_id"],
                )
            )
        return out


assert len(ACTION_COLUMN_TYPES) == len(ACTION_COLUMNS) == 13  # noqa: S101  # the row above

__all__ = ["ACTION_COLUMNS", "ACTION_COLUMN_TYPES", "ActionRow", "ActionRowFold"]
