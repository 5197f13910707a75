"""What the pages are sent: a session's events, compactly, and a page of sessions.

Pure conversions from what the facade answers to JSON-ready data, shared by the web app and by
``export --html``. The session page folds these events itself (time travel is a cut at a
version in the browser), so each event carries everything the page draws and nothing more.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from thoughtledger.api import LoopMark, VerifyReport
from thoughtledger.ledger.envelope import RecordedEvent, format_time
from thoughtledger.ledger.events import (
    ActionTaken,
    BranchExtended,
    BranchOpened,
    SessionCleared,
    SessionExpired,
    SessionStarted,
    ThoughtAnnotated,
    ThoughtCaptured,
    ThoughtGenerated,
    ThoughtRecorded,
    ThoughtRedacted,
    ThoughtRevised,
)
from thoughtledger.ledger.thought import MARKS
from thoughtledger.projections.state import SessionState

JsonDict = dict[str, Any]

_SAFE = 2**53 - 1
"""The largest whole number JavaScript holds exactly; larger counts travel as their digits."""

_SHORT_KEYS = {
    "is_revision": "ir",
    "revises_thought": "rv",
    "branch_from_thought": "bf",
    "branch_id": "b",
    "needs_more_thoughts": "nm",
}
"""The marks the page draws by name, under short keys; every other mark of the definition of a
thought travels in ``f`` under its camelCase name, and the page lists it as it is."""

_THOUGHTS = (
    ThoughtRecorded,
    ThoughtRevised,
    BranchOpened,
    BranchExtended,
    ThoughtGenerated,
    ThoughtCaptured,
)


def event_json(record: RecordedEvent) -> JsonDict:
    """One event as the session page reads it (short keys: a long session sends thousands).

    ``v`` version, ``p`` position, ``k`` type, ``at`` time, ``id`` event id, ``h`` hash, ``ph``
    previous hash; a thought adds ``n`` number, ``tt`` estimate, ``nx`` next needed, ``x`` text
    and, when given, ``ir`` is-revision, ``rv`` revises, ``bf`` branch-from, ``b`` branch id,
    ``nm`` needs-more, ``f`` any other mark (by camelCase name), and ``rd`` when its text was
    redacted (``x`` reads ``[redacted]``); a repeat, as :func:`mark_repeat` marks it, ``rp``
    and ``rpn``; a thought a model wrote adds ``m`` model, ``g`` guidance, ``c`` cost, ``ms``
    latency (milliseconds) and, where known, ``tk`` its prompt and completion tokens; a
    captured thought ``cap`` its form (its model and span under ``f``); an action ``act`` the
    tool, ``args`` its arguments and ``n`` the thought it followed;
    ``session.started`` adds ``md`` metadata and ``pre`` predecessor; a retirement ``why``; a
    redaction ``n`` the thought's number, ``rdv`` the redacted version and ``why`` (who and why).
    """
    item: JsonDict = {
        "v": record.version,
        "p": record.position,
        "k": record.event_type,
        "at": format_time(record.recorded_at),
        "id": str(record.event_id),
        "h": record.hash,
        "ph": record.prev_hash,
    }
    event = record.event
    if isinstance(event, _THOUGHTS):
        item |= {
            "n": _count(event.thought_number),
            "tt": _count(event.total_thoughts),
            "nx": event.next_thought_needed,
            "x": event.thought,
        }
        given = event.__dict__
        for mark in MARKS:
            value = given.get(mark.name)
            if value is None:
                continue
            if mark.kind is int:
                value = _count(value)
            short = _SHORT_KEYS.get(mark.name)
            if short is not None:
                item[short] = value
            else:
                item.setdefault("f", {})[mark.camel] = value
        if event.redacted:
            item["rd"] = True
        if isinstance(event, ThoughtGenerated):
            # A model's thought is drawn as the kind it was classified as.
            item |= {"k": event.kind, "gen": True, "m": event.generation.model}
            item |= {"g": event.guidance, "c": event.generation.cost}
            # The model's latency and tokens: the timeline draws them on the thought's bar.
            item |= {"ms": event.generation.latency_ms}
            tokens = (event.generation.prompt_tokens, event.generation.completion_tokens)
            if tokens != (None, None):
                item["tk"] = list(tokens)
        if isinstance(event, ThoughtCaptured):
            # Captured reasoning is a plain step, marked with its form; where it came from
            # is listed beside its marks.
            capture = event.capture
            item |= {"k": "thought.recorded", "cap": capture.form}
            facts = {"captured": capture.form, "model": capture.model, "span": capture.span_id}
            item.setdefault("f", {}).update({k: v for k, v in facts.items() if v is not None})
    elif isinstance(event, ActionTaken):
        item |= {"act": event.name, "args": event.arguments, "n": event.after_thought}
    elif isinstance(event, SessionStarted):
        item |= {"md": dict(event.metadata), "pre": event.predecessor_id}
        if event.fork_of is not None:
            item["fork"] = {"s": event.fork_of, "v": event.fork_version, "h": event.fork_hash}
    elif isinstance(event, SessionCleared):
        item["why"] = event.reason or "cleared"
    elif isinstance(event, SessionExpired):
        item["why"] = f"expired after {event.idle_seconds:.0f} s idle"
    elif isinstance(event, ThoughtRedacted):
        item |= {"n": _count(event.thought_number), "rdv": event.version}
        item["why"] = f"by {event.by}: {event.reason}"
    elif isinstance(event, ThoughtAnnotated):
        # A reviewer's mark, drawn on the thought it names: label, score, author, note.
        item |= {"n": _count(event.thought_number), "lb": event.label}
        if event.score is not None:
            item["sc"] = event.score
        if event.by is not None:
            item["by"] = event.by
        if event.note:
            item["nt"] = event.note
        if event.redacted:
            item["rd"] = True
    return item


def _count(value: int | None) -> int | str | None:
    # The API takes any whole number from 1; past 2**53 a page would show a rounded one.
    return str(value) if value is not None and value > _SAFE else value


def session_payload(
    session_id: str, records: Iterable[RecordedEvent], marks: Sequence[LoopMark] = ()
) -> JsonDict:
    """Everything the session page needs, in one object: the session's id and its events.

    ``marks`` are the session's loop marks, as the ledger answers them
    (``ledger.loops.marks``): each repeat is marked on its event (see :func:`mark_repeat`).

    An event's ``ph`` (previous hash) is left out when it is the hash of the event before it,
    as it is on an intact chain: the page reads it from there, and a long session travels a
    fifth lighter. Where a link is broken the stored value is sent, and the page shows it.
    """
    return {"sessionId": session_id, "events": PayloadEvents(marks).add(records)}


class PayloadEvents:
    """A session's events as :func:`session_payload` sends them, converted a slice at a time.

    Each :meth:`add` takes the next events in version order; what links them (the previous
    hash, the numbers of thoughts a repeat names) is carried from one slice to the next, so
    that the slices together are exactly the payload's ``events``.

    Args:
        marks: The session's loop marks, as the ledger answers them.
    """

    def __init__(self, marks: Sequence[LoopMark] = ()) -> None:
        self._repeats = {mark.version: mark.repeats_version for mark in marks}
        self._numbers: dict[int, Any] = {}
        self._before: str | None = None

    def add(self, records: Iterable[RecordedEvent]) -> list[JsonDict]:
        """The next events, as the page reads them (see :func:`event_json`)."""
        events: list[JsonDict] = []
        for record in records:
            item = event_json(record)
            mark_repeat(item, self._repeats, self._numbers)
            if item["ph"] == self._before:
                del item["ph"]
            self._before = item["h"]
            events.append(item)
        return events


def mark_repeat(item: JsonDict, repeats: Mapping[int, int], numbers: dict[int, Any]) -> None:
    """Mark ``item`` (an :func:`event_json`, in version order) if the ledger says it repeats.

    A repeat gains ``rp``, the version of the earlier thought it repeats, and ``rpn`` its number
    (``numbers``: each thought's number by version, filled in as the items go by); the page
    draws the mark, never works it out.
    """
    if "x" not in item:
        return
    version = item["v"]
    numbers[version] = item["n"]
    earlier = repeats.get(version)
    if earlier is not None:
        item["rp"], item["rpn"] = earlier, numbers.get(earlier)


def session_row(state: SessionState) -> JsonDict:
    """One row of the sessions list, from a session's facts (see ``Ledger.facts``)."""
    duration = (
        (state.updated_at - state.started_at).total_seconds()
        if state.started_at is not None and state.updated_at is not None
        else None
    )
    first = state.thoughts[0].thought if state.thoughts and state.complete else None
    return {
        "sessionId": state.session_id,
        "agent": state.metadata.get("agent"),
        "client": state.metadata.get("client"),
        "status": state.status,
        "version": state.version,
        "thoughts": state.thought_count,
        "branches": len(state.branches),
        "startedAt": format_time(state.started_at) if state.started_at else None,
        "updatedAt": format_time(state.updated_at) if state.updated_at else None,
        "seconds": duration,
        "first": first[:200] if first is not None else None,
    }


def json_bytes(content: Any) -> bytes:
    """``content`` as JSON: orjson, or the standard library for integers past 64 bits."""
    try:
        return orjson.dumps(content)
    except orjson.JSONEncodeError:  # estimates have no upper bound; orjson stops at 64 bits
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()


def report_json(report: VerifyReport) -> JsonDict:
    """A chain walk's outcome: ok, or the first bad event and why."""
    return {
        "sessionId": report.session_id,
        "ok": report.ok,
        "checked": report.checked,
        "version": report.first_bad_version,
        "eventId": report.first_bad_event_id,
        "position": report.first_bad_position,
        "reason": report.reason,
    }


_SCRIPT_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def script_json(data: Mapping[str, Any] | Sequence[Any]) -> str:
    r"""``data`` as JSON that is safe inside an HTML ``<script>`` element.

    ``<``, ``>`` and ``&`` become ``\u003c``-style escapes, so no text in the data can close
    the element (``</script>``) or open a comment; U+2028 and U+2029 are escaped too, as older
    JavaScript parsers end a line there. The result parses back to the same data.
    """
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_SCRIPT_SAFE)


__all__ = [
    "JsonDict",
    "PayloadEvents",
    "event_json",
    "json_bytes",
    "mark_repeat",
    "report_json",
    "script_json",
    "session_payload",
    "session_row",
]
