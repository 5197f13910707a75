"""Rebuilding many sessions at once straight from stored rows, without decoding every event.

Replaying a whole log spends most of its time building pydantic events it reads once. Rows read
back from the store were validated when they were written, so this fold reads plain thoughts'
JSON payloads directly (``json.loads``) into :class:`ThoughtEntry` objects, and hands the few
other events (a session's start, its end, a thought a model wrote) to
:func:`projections.state.replay`. The result is the state ``replay`` builds from decoded events;
the property tests hold the two equal for generated sessions.
"""

import json
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType
from typing import Any
from uuid import UUID

from ledger.chain import StoredRow
from ledger.codec import decode_payload
from ledger.envelope import RecordedEvent, parse_time
from ledger.errors import EventDecodingError
from ledger.events import EVENT_TYPES, SCHEMA_VERSION
from projections.state import Branch, SessionState, ThoughtEntry, empty, replay

_PLAIN = frozenset({"thought.recorded", "thought.revised", "branch.opened", "branch.extended"})
_BRANCHES = frozenset({"branch.opened", "branch.extended"})


class _Session:
    """One session being rebuilt: its state so far plus the plain thoughts not yet folded in."""

    __slots__ = ("entries", "state")

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.entries: list[ThoughtEntry] = []

    def settle(self) -> SessionState:
        if self.entries:
            self.state = _extend(self.state, self.entries)
            self.entries = []
        return self.state


def fold_rows(rows: Iterable[StoredRow], states: dict[str, SessionState]) -> None:
    """Fold stored rows (any sessions, in position order) into ``states``.

    Raises:
        EventDecodingError: A row has an unknown type, a newer schema or a malformed payload.
    """
    sessions: dict[str, _Session] = {}
    last_text = ""
    moment: datetime | None = None
    for row in rows:
        if row.recorded_at != last_text:
            last_text, moment = row.recorded_at, parse_time(row.recorded_at)
        assert moment is not None  # noqa: S101  # set on the first row
        session = sessions.get(row.session_id)
        if session is None:
            start = states.get(row.session_id) or empty(row.session_id)
            session = sessions[row.session_id] = _Session(start)
        kind = row.event_type
        if kind in _PLAIN and row.schema_version == SCHEMA_VERSION:
            session.entries.append(_entry(row, kind, moment))
            continue
        if kind not in EVENT_TYPES:
            raise EventDecodingError(f"unknown event type {kind!r}; upgrade thoughtledger")
        record = RecordedEvent(
            position=row.position,
            session_id=row.session_id,
            version=row.version,
            event_id=UUID(row.event_id),
            recorded_at=moment,
            schema_version=row.schema_version,
            event_type=kind,
            payload=row.payload,
            prev_hash=row.prev_hash,
            hash=row.hash,
            event=decode_payload(kind, row.schema_version, row.payload),
        )
        session.state = replay([record], session.settle())
    for session_id, session in sessions.items():
        states[session_id] = session.settle()


def _entry(row: StoredRow, kind: str, moment: datetime) -> ThoughtEntry:
    try:
        fields: dict[str, Any] = json.loads(row.payload)
        get = fields.get
        return ThoughtEntry(
            version=row.version,
            position=row.position,
            recorded_at=moment,
            kind=kind,
            thought=fields["thought"],
            thought_number=fields["thought_number"],
            total_thoughts=fields["total_thoughts"],
            next_thought_needed=fields["next_thought_needed"],
            is_revision=get("is_revision"),
            revises_thought=get("revises_thought"),
            branch_from_thought=get("branch_from_thought"),
            branch_id=get("branch_id"),
            needs_more_thoughts=get("needs_more_thoughts"),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise EventDecodingError(f"stored {kind} payload is malformed: {exc}") from exc


def _extend(state: SessionState, entries: list[ThoughtEntry]) -> SessionState:
    """Add plain thoughts to ``state`` exactly as :func:`replay` would."""
    branches = dict(state.branches)
    for entry in entries:
        branch_id, origin = entry.branch_id, entry.branch_from_thought
        if entry.kind in _BRANCHES and branch_id is not None and origin is not None:
            known = branches.get(branch_id)
            if known is None:
                branches[branch_id] = Branch(branch_id, origin, (entry.version,))
            else:
                branches[branch_id] = replace(known, versions=(*known.versions, entry.version))
    first, last = entries[0], entries[-1]
    return replace(
        state,
        version=last.version,
        started_at=state.started_at if state.started_at is not None else first.recorded_at,
        updated_at=last.recorded_at,
        thoughts=(*state.thoughts, *entries),
        branches=MappingProxyType(branches),
        thought_count=state.thought_count + len(entries),
    )


__all__ = ["fold_rows"]
