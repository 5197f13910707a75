"""Pure rules of sequential thinking: a command and what is known of its session in, events out."""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationError

from thoughtledger.ledger.errors import InvalidThoughtError
from thoughtledger.ledger.events import (
    BranchExtended,
    BranchOpened,
    Generation,
    LedgerEvent,
    SessionStarted,
    ThoughtGenerated,
    ThoughtKind,
    ThoughtRecorded,
    ThoughtRevised,
)
from thoughtledger.ledger.thought import ThoughtCore, ThoughtMarks
from thoughtledger.ledger.thought_types import Text, command_wording, describe_errors

DEFAULT_MAX_THOUGHT_BYTES = 1024 * 1024
"""Largest thought accepted by default, in UTF-8 bytes (configurable per ledger)."""

MAX_BRANCH_ID_CHARS = 256
"""Longest branch id accepted, in characters."""


class ThinkCommand(ThoughtMarks, ThoughtCore):
    """One sequential-thinking call, validated: a thought's fields and the rules it obeys.

    The fields are defined once, in :mod:`thoughtledger.ledger.thought`.

    Types are strict: ``"3"`` is not a number and ``1`` is not a boolean here; transports that
    must accept such spellings (the official MCP tool) convert them with their own types and
    hand over the typed fields (see :func:`checked_command`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    thought: Annotated[Text, Field(min_length=1)]
    branch_id: Annotated[Text, Field(max_length=MAX_BRANCH_ID_CHARS)] | None = None


def parse_command(
    arguments: Mapping[str, Any], *, max_thought_bytes: int = DEFAULT_MAX_THOUGHT_BYTES
) -> ThinkCommand:
    """Validate raw arguments (snake_case keys) into a :class:`ThinkCommand`.

    Raises:
        InvalidThoughtError: A field is missing, unknown, of the wrong type or out of range, or
            the thought is longer than ``max_thought_bytes``; the message names every problem.
    """
    try:
        command = ThinkCommand.model_validate(dict(arguments))
    except ValidationError as exc:
        raise InvalidThoughtError(describe(exc)) from None
    _check_size(command.thought, max_thought_bytes)
    return command


def checked_command(
    fields: Mapping[str, Any], *, max_thought_bytes: int = DEFAULT_MAX_THOUGHT_BYTES
) -> ThinkCommand:
    """Build a :class:`ThinkCommand` from fields a transport's own types already checked.

    The MCP tools (lax types) and the in-process tool (strict types) validate each field's type
    and bounds on the way in (see :mod:`thoughtledger.ledger.thought_types`); what those types do
    not say, a thought's length rules, is checked here (a refusal is worded as :func:`parse_command`
    words it), and pydantic-core validates the fields again, which costs less than building the
    command without validation.

    Args:
        fields: The thought's fields, snake_case, typed (absent optional fields left out).
        max_thought_bytes: Largest accepted thought, in UTF-8 bytes.

    Raises:
        InvalidThoughtError: The thought is empty or too long, or the branch id too long.
    """
    branch_id = fields.get("branch_id")
    if not fields["thought"] or (branch_id is not None and len(branch_id) > MAX_BRANCH_ID_CHARS):
        # Rare: let the command's own validation refuse it, in its own words.
        return parse_command(fields, max_thought_bytes=max_thought_bytes)
    _check_size(fields["thought"], max_thought_bytes)
    # Checked on the way in, yet validated again: pydantic-core does it in about a microsecond,
    # less than model_construct's Python loop over the fields (measured: 37-41 against 41-43 us
    # a thought through the whole facade), and a second check costs nothing in structure.
    return ThinkCommand.model_validate(fields)


def _check_size(thought: str, max_thought_bytes: int) -> None:
    # Four bytes a character at most: most thoughts are judged without encoding them.
    if len(thought) * 4 > max_thought_bytes and len(thought.encode("utf-8")) > max_thought_bytes:
        raise InvalidThoughtError(
            f"thought is {len(thought.encode('utf-8'))} bytes, over the limit of "
            f"{max_thought_bytes} bytes; split it into several thoughts"
        )


def describe(error: ValidationError) -> str:
    """Render a pydantic error as one line a person (or a model) can act on."""
    return "invalid thought: " + describe_errors(error, command_wording)


@dataclass(frozen=True, slots=True)
class Generated:
    """Who wrote a command's thought, when a language model did.

    Attributes:
        guidance: What the caller sent as ``thought`` (the problem, on a first thought).
        generation: How the model wrote it.
    """

    guidance: str
    generation: Generation


def classify(command: ThinkCommand, known_branches: Collection[str]) -> ThoughtKind:
    """Return what ``command``'s thought is in the line of reasoning.

    A branch is registered only when both ``branch_from_thought`` and ``branch_id`` are given
    (as the official server does); otherwise a revision is a revision and anything else a plain
    thought.
    """
    if command.branch_from_thought is not None and command.branch_id:
        return "branch.extended" if command.branch_id in known_branches else "branch.opened"
    return "thought.revised" if command.is_revision else "thought.recorded"


_HandWritten = type[ThoughtRecorded | ThoughtRevised | BranchOpened | BranchExtended]

_BY_KIND: dict[ThoughtKind, _HandWritten] = {
    "thought.recorded": ThoughtRecorded,
    "thought.revised": ThoughtRevised,
    "branch.opened": BranchOpened,
    "branch.extended": BranchExtended,
}


def starts_a_run(command: ThinkCommand) -> bool:
    """Whether ``command`` opens a new line of reasoning: a plain thought numbered 1.

    Not a revision, not a branch: an agent that starts again from thought 1 is on a new problem.
    """
    return (
        command.thought_number == 1
        and not command.is_revision
        and command.revises_thought is None
        and command.branch_from_thought is None
        and command.branch_id is None
    )


def decide_thought(
    command: ThinkCommand,
    *,
    version: int,
    known_branches: Collection[str],
    metadata: Mapping[str, str] | None = None,
    predecessor_id: str | None = None,
    generated: Generated | None = None,
    owner: str | None = None,
) -> list[LedgerEvent]:
    """Return the events that record ``command`` on a session at ``version``.

    A session's first append also records :class:`SessionStarted`. A thought whose number is
    above the estimate raises the estimate to its number (as the official server does) and keeps
    the caller's figure in ``requested_total_thoughts``. The thought is classified by
    :func:`classify`; a thought a model wrote is one :class:`ThoughtGenerated` carrying that
    classification as its ``kind``, the caller's guidance and the generation.
    """
    raised = command.thought_number > command.total_thoughts
    # A pydantic model keeps exactly its field values in __dict__: a copy is a tenth of the cost
    # of model_dump(), and every thought passes here.
    facts: dict[str, Any] = dict(command.__dict__)
    facts["total_thoughts"] = command.thought_number if raised else command.total_thoughts
    facts["requested_total_thoughts"] = command.total_thoughts if raised else None
    kind = classify(command, known_branches)
    event: LedgerEvent
    if generated is not None:
        event = ThoughtGenerated(
            **facts,
            kind=kind,
            guidance=generated.guidance,
            generation=generated.generation,
        )
    else:
        # The command's fields were checked; validating them again is the fastest public way.
        event = _BY_KIND[kind].model_validate(facts)
    if version == 0:
        # Metadata are facts the caller's software gives (a client's name...): PostgreSQL's JSON
        # operators cannot hold a NUL, and the owner index reads a start event's payload with
        # them, so a NUL is kept as U+FFFD rather than failing the session's first append.
        facts_given = {
            key.replace("\x00", "\ufffd"): value.replace("\x00", "\ufffd")
            for key, value in (metadata or {}).items()
        }
        started = SessionStarted(metadata=facts_given, predecessor_id=predecessor_id, owner=owner)
        return [started, event]
    return [event]


__all__ = [
    "DEFAULT_MAX_THOUGHT_BYTES",
    "Generated",
    "ThinkCommand",
    "checked_command",
    "classify",
    "decide_thought",
    "describe",
    "parse_command",
    "starts_a_run",
]
