"""The views callers read: pure functions from a session state (or records) to JSON dicts.

Key names follow the reference each view comes from: camelCase for the official server and the
session pattern, snake_case for the MCP API reference.
"""

from collections.abc import Iterable
from typing import Any

from thoughtledger.ledger.envelope import RecordedEvent, format_time
from thoughtledger.ledger.events import Generation
from thoughtledger.ledger.thought import MARKS
from thoughtledger.projections.entries import ThoughtEntry
from thoughtledger.projections.state import SessionState

JsonDict = dict[str, Any]


def minimal_response(entry: ThoughtEntry) -> JsonDict:
    """Return exactly the four flow-control keys of the minimal-response spec.

    They are ``thought, thoughtNumber, totalThoughts, nextThoughtNeeded``.
    """
    return {
        "thought": entry.thought,
        "thoughtNumber": entry.thought_number,
        "totalThoughts": entry.total_thoughts,
        "nextThoughtNeeded": entry.next_thought_needed,
    }


def official_view(state: SessionState) -> JsonDict:
    """Return the official server's answer.

    It is ``thoughtNumber, totalThoughts, nextThoughtNeeded, branches, thoughtHistoryLength``,
    numbers of the last thought (zeros before the first).
    """
    last = state.last
    return {
        "thoughtNumber": last.thought_number if last else 0,
        "totalThoughts": last.total_thoughts if last else 0,
        "nextThoughtNeeded": last.next_thought_needed if last else True,
        "branches": list(state.branches),
        "thoughtHistoryLength": state.thought_count,
    }


def session_view(state: SessionState, *, history_window: int | None = None) -> JsonDict:
    """Return the session pattern's answer, with a ``summary`` once no thought is needed.

    Each ``thoughtHistory`` item is :func:`history_item`'s: the thought's number and text with
    its revision and branch fields.

    Args:
        state: The session.
        history_window: Keep only the last N thoughts in ``thoughtHistory`` (``None``: all).
            ``thoughtHistoryLength`` always counts every thought.
    """
    thoughts = state.thoughts
    shown = thoughts[max(0, len(thoughts) - history_window) :] if history_window else thoughts
    history = [history_item(entry) for entry in shown]
    view = {"sessionId": state.session_id, **official_view(state), "thoughtHistory": history}
    last = state.last
    if last is not None and not last.next_thought_needed:
        view["summary"] = (
            f"Sequential thinking complete: {state.thought_count} thoughts processed "
            f"across {len(state.branches)} branches."
        )
    return view


_HISTORY_MARKS = tuple((mark.camel, mark.name) for mark in MARKS)


def history_item(entry: ThoughtEntry) -> JsonDict:
    """One thought of ``thoughtHistory``: its number and text, and how it relates to the others.

    Every mark of the definition of a thought is kept when given (``None`` fields left out): without
    ``revisesThought`` a revision does not say what it corrects, and without ``branchId`` two
    thoughts numbered 5 on different branches read as one line of thought. A redacted thought
    reads ``[redacted]`` and says so (``"redacted": true``).
    """
    item: JsonDict = {"thoughtNumber": entry.thought_number, "thought": entry.thought}
    for camel, name in _HISTORY_MARKS:
        value = entry.mark(name)
        if value is not None:
            item[camel] = value
    if entry.redacted:
        item["redacted"] = True
    return item


def status_view(state: SessionState, *, session_id_shown: bool) -> JsonDict:
    """The ``sequential_thinking`` answer of the MCP API reference (snake_case, with ``status``).

    Args:
        state: The session.
        session_id_shown: Whether to include ``session_id`` (the MCP API reference omits the default
            session's).
    """
    last = state.last
    view: JsonDict = {
        "thought_number": last.thought_number if last else 0,
        "total_thoughts": last.total_thoughts if last else 0,
        "next_thought_needed": last.next_thought_needed if last else True,
        "branches": list(state.branches),
        "thought_history_length": state.thought_count,
        "status": last.status if last else "recorded",
    }
    if session_id_shown:
        view["session_id"] = state.session_id
    return view


def external_view(state: SessionState, entry: ThoughtEntry, *, session_id_shown: bool) -> JsonDict:
    """The ``sequential_thinking_external`` answer (the MCP API reference) for ``entry``.

    Besides :func:`status_view`'s fields it carries ``thought_content`` (the thought as recorded:
    the model's text, or the caller's in manual mode) and, for a thought a model wrote,
    ``model_used`` and whichever of ``confidence`` and ``reasoning_hint`` the model gave. Its
    plain status is ``thinking`` where :func:`status_view` says ``recorded`` (as the MCP API
    reference has it).

    Args:
        state: The session after the thought.
        entry: The thought just recorded.
        session_id_shown: Whether to include ``session_id`` (the MCP API reference omits the default
            session's).
    """
    status = entry.status
    view: JsonDict = {
        "thought_number": entry.thought_number,
        "total_thoughts": entry.total_thoughts,
        "next_thought_needed": entry.next_thought_needed,
        "thought_content": entry.thought,
        "branches": list(state.branches),
        "thought_history_length": state.thought_count,
        "status": "thinking" if status == "recorded" else status,
    }
    if session_id_shown:
        view["session_id"] = state.session_id
    generation = entry.generation
    if generation is not None:
        view["model_used"] = generation.served_model or generation.model
        if generation.confidence is not None:
            view["confidence"] = generation.confidence
        if generation.reasoning_hint is not None:
            view["reasoning_hint"] = generation.reasoning_hint
    return view


def branch_sets(state: SessionState) -> list[JsonDict]:
    """Every branch in first-seen order: its id, origin thought and thoughts."""
    by_version = {entry.version: entry for entry in state.thoughts}
    return [
        {
            "branchId": branch.branch_id,
            "fromThought": branch.from_thought,
            "thoughts": [
                {
                    "thoughtNumber": by_version[v].thought_number,
                    "thought": by_version[v].thought,
                    "version": v,
                }
                for v in branch.versions
            ],
        }
        for branch in state.branches.values()
    ]


def thought_history(state: SessionState) -> list[JsonDict]:
    """Every thought with all its recorded fields, version and time."""
    return [thought_record(entry) for entry in state.thoughts]


def thought_record(entry: ThoughtEntry) -> JsonDict:
    """One thought with every field it was recorded with (``None`` fields left out).

    A redacted thought reads ``[redacted]`` (its guidance too) with ``"redacted": true``.
    """
    item: JsonDict = {
        "version": entry.version,
        "recordedAt": format_time(entry.recorded_at),
        "kind": entry.kind,
        "status": entry.status,
        "thoughtNumber": entry.thought_number,
        "totalThoughts": entry.total_thoughts,
        "nextThoughtNeeded": entry.next_thought_needed,
        "thought": entry.thought,
    }
    for camel, name in _HISTORY_MARKS:
        value = entry.mark(name)
        if value is not None:
            item[camel] = value
    if entry.redacted:
        item["redacted"] = True
    if entry.generation is not None:
        item["guidance"] = entry.guidance
        item["generation"] = generation_record(entry.generation)
    return item


def generation_record(generation: Generation) -> JsonDict:
    """How a model wrote a thought, camelCase, with the figures the provider did not give left out.

    ``cost`` is the provider's own figure (OpenRouter reports one); tokens and latency are always
    what this call used, so a reader can price them.
    """
    fields = {
        "model": generation.model,
        "servedModel": generation.served_model,
        "provider": generation.provider,
        "temperature": generation.temperature,
        "promptSha256": generation.prompt_sha256,
        "promptVersion": generation.prompt_version,
        "contextVersion": generation.context_version,
        "structured": generation.structured,
        "promptTokens": generation.prompt_tokens,
        "completionTokens": generation.completion_tokens,
        "cost": generation.cost,
        "latencyMs": generation.latency_ms,
        "attempts": generation.attempts,
        "finishReason": generation.finish_reason,
        "responseId": generation.response_id,
        "confidence": generation.confidence,
        "reasoningHint": generation.reasoning_hint,
    }
    return {key: value for key, value in fields.items() if value is not None}


def full_history(records: Iterable[RecordedEvent]) -> list[JsonDict]:
    """Every event of a session with its position, version, time, id, type, hashes and payload."""
    return [
        {
            "position": r.position,
            "version": r.version,
            "recordedAt": format_time(r.recorded_at),
            "eventId": str(r.event_id),
            "type": r.event_type,
            "schemaVersion": r.schema_version,
            "prevHash": r.prev_hash,
            "hash": r.hash,
            "event": _event_fields(r),
        }
        for r in records
    ]


def _event_fields(record: RecordedEvent) -> JsonDict:
    fields = record.event.model_dump(mode="json", exclude={"type", "schema_version"})
    if getattr(record.event, "redacted", False):
        fields["redacted"] = True
    return fields


__all__ = [
    "JsonDict",
    "branch_sets",
    "external_view",
    "full_history",
    "generation_record",
    "history_item",
    "minimal_response",
    "official_view",
    "session_view",
    "status_view",
    "thought_history",
    "thought_record",
]
