"""One flat row per annotation, folded from the log: what the ``tl_annotations`` view answers.

The CSV and Parquet exports of annotations use this fold rather than the view, so that they work
the same on every backend (the in-memory store has no SQL) and on a ledger whose schema predates
the view. The columns are :data:`ANNOTATION_COLUMNS`; a contract test holds fold and view equal.
Like :mod:`thoughtledger.projections.thought_rows`, it reads stored rows undecoded, page by page,
and remembers only each session's agent and client.
"""

from collections.abc import Iterable
from typing import Any

import orjson

from thoughtledger.ledger.envelope import LogRow
from thoughtledger.ledger.errors import EventDecodingError
from thoughtledger.ledger.events import ANNOTATION_TYPE
from thoughtledger.ledger.store.columns import (
    ANNOTATION_COLUMN_TYPES,
    ANNOTATION_COLUMNS,
)
from thoughtledger.projections.thought_rows import view_count, view_payload

AnnotationRow = tuple[Any, ...]
"""One row of :data:`ANNOTATION_COLUMNS`."""


class EventRowFold:
    """Turns pages of log rows (in position order) into one flat row per event of one type.

    It remembers each session's agent and client (from its opening event) and begins each row
    with the columns every such view begins with: the event's position, session, version and
    time, then the session's agent and client. A subclass names the type and gives the rest of
    the row, from the event's payload.
    """

    event_type: str = ""
    """The event type whose events become rows."""

    def __init__(self) -> None:
        self._openers: dict[str, tuple[str | None, str | None]] = {}

    def fold(self, rows: Iterable[LogRow]) -> list[tuple[Any, ...]]:
        """Return the rows of ``rows``' events of the type, which continue the pages folded before.

        Raises:
            EventDecodingError: A stored payload is not a JSON object (a damaged ledger).
        """
        try:
            return self._fold(rows)
        except (orjson.JSONDecodeError, AttributeError, KeyError) as exc:
            raise EventDecodingError(f"a stored payload is malformed: {exc}") from exc

    def _fold(self, rows: Iterable[LogRow]) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for row in rows:
            if row.event_type == "session.started" and row.version == 1:
                metadata = view_payload(row.payload).get("metadata") or {}
                self._openers[row.session_id] = (metadata.get("agent"), metadata.get("client"))
            elif row.event_type == self.event_type:
                agent, client = self._openers.get(row.session_id, (None, None))
                own = self._columns(view_payload(row.payload))
                out.append(
                    (
                        row.position,
                        row.session_id,
                        row.version,
                        row.recorded_at,
                        agent,
                        client,
                        *own,
                    )
                )
        return out

    def _columns(self, payload: Any) -> tuple[Any, ...]:
        """The row's columns after the agent and client, from the event's payload."""
        raise NotImplementedError


class AnnotationRowFold(EventRowFold):
    """Turns pages of log rows (in position order) into annotation rows, one page at a time."""

    event_type = ANNOTATION_TYPE

    def _columns(self, payload: Any) -> tuple[Any, ...]:
        content = payload.get("content")  # gone once the note was redacted
        score = payload.get("score")
        return (
            view_count(payload["thought_number"]),
            payload["label"],
            None if score is None else float(score),
            (content.get("note") or None) if content is not None else None,
            payload.get("by"),
            content is None,
        )


assert len(ANNOTATION_COLUMN_TYPES) == len(ANNOTATION_COLUMNS) == 12  # noqa: S101  # 6 opening columns, 6 above

__all__ = [
    "ANNOTATION_COLUMNS",
    "ANNOTATION_COLUMN_TYPES",
    "AnnotationRow",
    "AnnotationRowFold",
    "EventRowFold",
]
