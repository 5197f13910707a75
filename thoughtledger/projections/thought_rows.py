"""One flat row per thought, folded from the log: what the ``tl_thoughts`` view answers in SQL.

The CSV and Parquet exports use this fold rather than the view, so that they work the same on
every backend (the in-memory store has no SQL) and on a ledger whose schema predates the views.
The columns and their meaning are :data:`THOUGHT_COLUMNS` (from
:mod:`thoughtledger.ledger.store.columns`, re-exported for the exports); a contract test holds the
fold and the views equal.

The fold reads stored rows undecoded (one JSON parse per event, no model validation), page by
page; it remembers only each session's agent and client, never an event.
"""

from collections.abc import Iterable
from typing import Any

import orjson

from thoughtledger.ledger.envelope import LogRow
from thoughtledger.ledger.errors import EventDecodingError
from thoughtledger.ledger.events import REDACTABLE_FROM, THOUGHT_TYPES
from thoughtledger.ledger.store.columns import (
    LARGEST_COUNT,
    NUL_ESCAPE,
    NUL_STANDIN,
    THOUGHT_COLUMN_TYPES,
    THOUGHT_COLUMNS,
    THOUGHT_FIELD_COLUMNS,
)

ThoughtRow = tuple[Any, ...]
"""One row of :data:`THOUGHT_COLUMNS`: plain values (text, integers, booleans, floats, None)."""

# The thought's own fields and the model's usage, as they stand in the columns (read from there,
# so the fold cannot drift from the view).
_FIELDS = tuple(field.name for field in THOUGHT_FIELD_COLUMNS)
_USAGE = THOUGHT_COLUMNS[THOUGHT_COLUMNS.index("model") : THOUGHT_COLUMNS.index("latency_ms") + 1]
_NO_USAGE: tuple[None, ...] = (None,) * len(_USAGE)
_COUNTS = frozenset(
    name for name, kind in THOUGHT_COLUMN_TYPES.items() if kind == "int64" and name in _FIELDS
) | {"prompt_tokens", "completion_tokens", "latency_ms"}


def view_count(value: Any) -> int | None:
    """A count as the views show it: unknown from 10**18 on (orjson reads past 64 bits as float)."""
    return value if type(value) is int and value <= LARGEST_COUNT else None


def view_payload(payload: str) -> Any:
    """Parse a payload as the views read it: each NUL escape read as U+FFFD (see the views).

    Raises:
        orjson.JSONDecodeError: Not JSON (a damaged ledger; each fold says so in its words).
    """
    if NUL_ESCAPE in payload:
        payload = payload.replace(NUL_ESCAPE, NUL_STANDIN)
    return orjson.loads(payload)


def _field(payload: dict[str, Any], name: str) -> Any:
    value = payload.get(name)
    return view_count(value) if name in _COUNTS else value


assert (  # noqa: S101  # the fold builds the documented columns, in order
    "position",
    "session_id",
    "version",
    "recorded_at",
    "agent",
    "client",
    "kind",
    *_FIELDS,
    *_USAGE,
    "redacted",
) == THOUGHT_COLUMNS


class ThoughtRowFold:
    """Turns pages of log rows (in position order) into thought rows, one page at a time."""

    def __init__(self) -> None:
        self._openers: dict[str, tuple[str | None, str | None]] = {}

    def fold(self, rows: Iterable[LogRow]) -> list[ThoughtRow]:
        """Return the thought rows of ``rows``, which continue the pages folded before.

        Raises:
            EventDecodingError: A stored payload is not a JSON object (a damaged ledger).
        """
        try:
            return self._fold(rows)
        except (orjson.JSONDecodeError, AttributeError) as exc:
            raise EventDecodingError(f"a stored payload is malformed: {exc}") from exc

    def _fold(self, rows: Iterable[LogRow]) -> list[ThoughtRow]:
        out: list[ThoughtRow] = []
        openers = self._openers
        for row in rows:
            event_type = row.event_type
            if event_type == "session.started":
                if row.version == 1:
                    metadata = view_payload(row.payload).get("metadata") or {}
                    openers[row.session_id] = (metadata.get("agent"), metadata.get("client"))
                continue
            if event_type not in THOUGHT_TYPES:
                continue
            payload = view_payload(row.payload)
            redacted = False
            if row.schema_version >= REDACTABLE_FROM:
                # Schema 2 keeps the text in the content member, gone once redacted.
                content = payload.get("content")
                redacted = content is None
                payload["thought"] = None if redacted else content.get("thought")
            generation = payload.get("generation")
            kind = payload.get("kind") if event_type == "thought.generated" else event_type
            if generation is not None:
                usage = tuple(generation.get(name) for name in _USAGE)
            elif event_type == "thought.captured":
                # Captured reasoning names its model and provider (no tokens of its own).
                capture = payload.get("capture") or {}
                usage = (capture.get("model"), capture.get("provider"), *_NO_USAGE[2:])
            else:
                usage = _NO_USAGE
            cost = usage[4]
            out.append(
                (
                    row.position,
                    row.session_id,
                    row.version,
                    row.recorded_at,
                    *openers.get(row.session_id, (None, None)),
                    kind,
                    *(_field(payload, name) for name in _FIELDS),
                    *usage[:4],
                    None if cost is None else float(cost),
                    usage[5],
                    redacted,
                )
            )
        return out


__all__ = [
    "THOUGHT_COLUMNS",
    "THOUGHT_COLUMN_TYPES",
    "ThoughtRow",
    "ThoughtRowFold",
    "view_count",
    "view_payload",
]
