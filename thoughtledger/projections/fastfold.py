"""Rebuilding many sessions at once straight from stored rows, without decoding every event.

Replaying a whole log spends most of its time building pydantic events it reads once. Rows read
back from the store were validated when they were written, so this fold reads plain thoughts'
JSON payloads (of either payload schema) directly into :class:`ThoughtEntry` tuples, and hands the
few other events (a session's start, its end, a thought a model wrote, a redaction) to
:func:`thoughtledger.projections.state.replay`. The result is the state ``replay`` builds from
decoded events; the property tests hold the two equal for generated sessions. It stays because
``Ledger.rebuild`` is about 1.5 times as fast with it (``tools/bench replay``); it reads a marks'
fields that :class:`ThoughtEntry` has no attribute for from the definition of a thought
(:func:`thoughtledger.projections.entries.more_marks`), as the fold does.
"""

import json
from collections.abc import Iterable
from datetime import datetime
from types import MappingProxyType
from typing import Any, NamedTuple

import orjson

from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.content import REDACTED
from thoughtledger.ledger.envelope import LogRow, parse_time
from thoughtledger.ledger.errors import EventDecodingError
from thoughtledger.ledger.events import PAYLOAD_SCHEMA_VERSION, REDACTABLE_FROM, LedgerEvent
from thoughtledger.projections.entries import EXTRA_MARKS, ThoughtEntry, join_branch, more_marks
from thoughtledger.projections.state import SessionState, empty, replay

_NO_MARKS: dict[str, object] = {}

_PLAIN = frozenset({"thought.recorded", "thought.revised", "branch.opened", "branch.extended"})
_BRANCHES = frozenset({"branch.opened", "branch.extended"})


class _Fact(NamedTuple):
    """A decoded event with what the fold reads of its envelope (see ``state.Folded``)."""

    version: int
    position: int
    recorded_at: datetime
    event: LedgerEvent


def fold_rows(rows: Iterable[LogRow], states: dict[str, SessionState]) -> None:
    """Fold stored rows (any sessions, in position order) into ``states``.

    Raises:
        EventDecodingError: A row has an unknown type, a newer schema or a malformed payload.
    """
    # Plain thoughts wait in a list per session and join its state once, at the end (or before
    # another kind of event), so a session of n thoughts costs one state, not n.
    pending: dict[str, list[ThoughtEntry]] = {}
    # orjson parses these payloads three times faster than json, but reads an integer beyond 64
    # bits as a float; thought numbers have no upper bound, so such a payload is parsed again
    # with json (events hold no floats, so a float here can only be such an integer).
    loads = orjson.loads
    last_text = ""
    moment = datetime.min
    for row in rows:
        position, session_id, version, recorded_at, schema_version, kind, payload = row
        if recorded_at != last_text:
            last_text, moment = recorded_at, parse_time(recorded_at)
        entries = pending.get(session_id)
        if entries is None:
            entries = pending[session_id] = []
        if kind in _PLAIN and schema_version <= PAYLOAD_SCHEMA_VERSION:
            try:
                fields: dict[str, Any] = loads(payload)
                get = fields.get
                if schema_version < REDACTABLE_FROM:
                    text, gone = fields["thought"], False
                else:  # the text is in the content member, gone once redacted
                    content = get("content")
                    gone = content is None
                    text = REDACTED if content is None else content["thought"]
                number, total = fields["thought_number"], fields["total_thoughts"]
                revises, origin = get("revises_thought"), get("branch_from_thought")
                if float in (type(number), type(total), type(revises), type(origin)):
                    fields = json.loads(payload)
                    get = fields.get
                    number, total = fields["thought_number"], fields["total_thoughts"]
                    revises, origin = get("revises_thought"), get("branch_from_thought")
                entries.append(
                    ThoughtEntry(
                        version,
                        position,
                        moment,
                        kind,
                        text,
                        number,
                        total,
                        fields["next_thought_needed"],
                        get("is_revision"),
                        revises,
                        origin,
                        get("branch_id"),
                        get("needs_more_thoughts"),
                        None,
                        None,
                        gone,
                        more_marks(get) if EXTRA_MARKS else _NO_MARKS,
                    )
                )
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise EventDecodingError(f"stored {kind} payload is malformed: {exc}") from exc
            continue
        fact = _Fact(version, position, moment, decode_payload(kind, schema_version, payload))
        state = _settle(states.get(session_id) or empty(session_id), entries)
        states[session_id] = replay([fact], state)
    for session_id, entries in pending.items():
        if entries:
            states[session_id] = _settle(states.get(session_id) or empty(session_id), entries)


def _settle(state: SessionState, entries: list[ThoughtEntry]) -> SessionState:
    """Add waiting plain thoughts to ``state`` exactly as :func:`replay` would, and empty them."""
    if not entries:
        return state
    branches = dict(state.branches)
    for entry in entries:
        if entry.kind in _BRANCHES:
            join_branch(branches, entry)
    first, last = entries[0], entries[-1]
    settled = state._replace(
        version=last.version,
        started_at=state.started_at if state.started_at is not None else first.recorded_at,
        updated_at=last.recorded_at,
        thoughts=(*state.thoughts, *entries),
        branches=MappingProxyType(branches),
        thought_count=state.thought_count + len(entries),
    )
    entries.clear()
    return settled


__all__ = ["fold_rows"]
