"""The actions an agent took, as readers show them: each under the thought it followed.

An action (an ``action.taken`` event: a tool call captured from an agent's telemetry) is no part
of the line of reasoning, so a session's state holds none (a server recording many sessions
holds only their heads). A reader asks the ledger for a session's actions (``Ledger.actions``,
or those a history page read) and hangs each under the thought it followed, as the browser
view's tree does: :func:`placed` says where.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.events import ActionTaken
from thoughtledger.projections.entries import Folded, ThoughtEntry


class ActionEntry(NamedTuple):
    """One action an agent took, as the ledger keeps it.

    Attributes:
        version: The version of its ``action.taken`` event.
        position: Its event's place in the log.
        recorded_at: When it was recorded.
        name: The tool called.
        arguments: The call's arguments as the sender gave them (JSON text, possibly cut).
        arguments_cut: Whether the arguments were cut at the ledger's bound.
        after_thought: The number of the thought it followed (``None``: none came before it).
        call_id: The provider's id of the call, if sent.
        trace_id: The trace of the span that carried it.
        span_id: The span that carried it.
    """

    version: int
    position: int
    recorded_at: datetime
    name: str
    arguments: str
    arguments_cut: bool
    after_thought: int | None
    call_id: str | None
    trace_id: str
    span_id: str


def action_of(record: Folded) -> ActionEntry | None:
    """The action ``record`` carries, or ``None`` when it carries none."""
    event = record.event
    if not isinstance(event, ActionTaken):
        return None
    return ActionEntry(
        record.version,
        record.position,
        record.recorded_at,
        event.name,
        event.arguments,
        event.arguments_cut,
        event.after_thought,
        event.call_id,
        event.trace_id,
        event.span_id,
    )


def actions_in(records: Iterable[Folded]) -> list[ActionEntry]:
    """The actions among ``records``, in their order."""
    return [action for action in map(action_of, records) if action is not None]


def action_json(action: ActionEntry) -> dict[str, object]:
    """One action as JSON (camelCase keys; every key present, ``null`` when not known)."""
    return {
        "version": action.version,
        "recordedAt": format_time(action.recorded_at),
        "afterThought": action.after_thought,
        "name": action.name,
        "arguments": action.arguments,
        "argumentsCut": action.arguments_cut,
        "callId": action.call_id,
        "traceId": action.trace_id,
        "spanId": action.span_id,
    }


def placed(
    thoughts: Sequence[ThoughtEntry], actions: Iterable[ActionEntry]
) -> dict[int | None, list[ActionEntry]]:
    """Each action under the thought it followed, by that thought's place in ``thoughts``.

    The thought an action followed is the latest one recorded before it with the number it
    names (a number may recur on branches); ``None`` holds the actions that came before any
    thought. ``thoughts`` is a session's, in the order recorded: a fork's inherited thoughts
    first (they came before any of its own events), then its own, in version order. An action
    naming a number no thought before it has (a state cut short) goes under the latest.

    Args:
        thoughts: The session's thoughts (``SessionState.thoughts``).
        actions: Its actions, in version order.
    """
    by_number: dict[int, int] = {}
    last: int | None = None
    place = 0
    out: dict[int | None, list[ActionEntry]] = {}
    for action in actions:
        while place < len(thoughts) and (
            thoughts[place].source is not None or thoughts[place].version < action.version
        ):
            by_number[thoughts[place].thought_number] = last = place
            place += 1
        target = None
        if action.after_thought is not None:
            target = by_number.get(action.after_thought, last)
        out.setdefault(target, []).append(action)
    return out


__all__ = ["ActionEntry", "action_json", "action_of", "actions_in", "placed"]
