"""The prompt that asks a model for a session's next thought, built from the session's state.

Pure and deterministic: the same state, request and bound give the same messages, byte for byte.
So the prompt is not stored; its SHA-256 is, with the session version it was built from, and an
audit rebuilds it (:func:`build_prompt` on the state as of that version) and compares hashes.
Any change to the wording here must bump :data:`PROMPT_VERSION`.

What the model sees: the problem (the session's first thought, or its guidance), the thoughts so
far on the line of reasoning being extended (the main line, plus the active branch when the new
thought is on one), each marked as a revision or branch where it is one, then what to write now
and the caller's guidance. Bounded: long texts are cut, and when the thoughts still do not fit,
the oldest are left out (the first is always kept).
"""

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from thoughtledger.ledger.decide import ThinkCommand
from thoughtledger.projections.entries import ThoughtEntry, more_marks
from thoughtledger.projections.state import SessionState

PROMPT_VERSION = 1
"""Bumped whenever the wording or layout below changes (old hashes then need the old builder)."""

DEFAULT_MAX_PROMPT_CHARS = 24_000

_Speaker = Literal["system", "user"]
PromptMessage = tuple[_Speaker, str]
"""One chat message as sent: its role and its text."""

_CUT = " [...]"

_SYSTEM = (
    "You write the next thought of a sequential-thinking session: one step of careful reasoning "
    "towards solving the problem, building on the thoughts so far. Write only this one thought, "
    "in plain prose; do not number it or repeat earlier thoughts."
)
_STRUCTURED = (
    ' Answer with a JSON object with three keys: "thought" (the thought), "confidence" '
    '(your confidence in the thought, from 0.0 to 1.0) and "reasoning_hint" (one short '
    "suggestion for the step after it)."
)
_PLAIN = " Answer with the thought alone."

ANSWER_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "thought": {"type": "string", "description": "The next thought."},
        "confidence": {
            "type": "number",
            "description": "Confidence in the thought, from 0.0 to 1.0.",
        },
        "reasoning_hint": {
            "type": "string",
            "description": "One short suggestion for the step after this one.",
        },
    },
    "required": ["thought", "confidence", "reasoning_hint"],
    "additionalProperties": False,
}
"""The structured answer asked for (strict structured outputs need every key required)."""


@dataclass(frozen=True, slots=True)
class ThoughtPrompt:
    """What to ask a model for one thought; :meth:`messages` renders it.

    Attributes:
        body: The user message: problem, thoughts so far, task and guidance.
        context_version: The session version the prompt was built from.
        version: The builder's :data:`PROMPT_VERSION`.
    """

    body: str
    context_version: int
    version: int = PROMPT_VERSION

    def messages(self, *, structured: bool) -> list[PromptMessage]:
        """The chat messages: a system message (asking for JSON or for plain text) and the body."""
        return [("system", _SYSTEM + (_STRUCTURED if structured else _PLAIN)), ("user", self.body)]


def prompt_sha256(messages: list[PromptMessage]) -> str:
    """SHA-256 of messages as sent: ``[{"content", "role"}...]`` as compact sorted-key JSON."""
    payload = [{"role": role, "content": content} for role, content in messages]
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_prompt(
    state: SessionState, request: ThinkCommand, *, max_chars: int = DEFAULT_MAX_PROMPT_CHARS
) -> ThoughtPrompt:
    """Build the prompt for ``request`` on a session in ``state``.

    On a session without thoughts, ``request.thought`` is the problem itself (the MCP API
    reference's step 1); afterwards it is guidance for the next thought.

    Args:
        state: The session the thought will land in (empty for a new or retired session).
        request: The caller's call; its ``thought`` is the problem or the guidance.
        max_chars: Roughly how long the body may be, in characters.
    """
    first = not state.thoughts
    problem = request.thought if first else state.original_query or ""
    sections = ["Problem:\n" + _cut(problem, max_chars // 4)]
    sections.append(_history(state, request, max_chars - len(sections[0]) - max_chars // 4))
    sections.append(_task(request))
    if not first:
        sections.append("Guidance for this thought:\n" + _cut(request.thought, max_chars // 8))
    return ThoughtPrompt("\n\n".join(sections), state.version)


def _history(state: SessionState, request: ThinkCommand, budget: int) -> str:
    branch = request.branch_id if request.branch_from_thought is not None else None
    shown = [
        entry
        for entry in state.thoughts
        if not _on_branch(entry) or (branch is not None and entry.branch_id == branch)
    ]
    if not shown:
        return "No thoughts yet."
    per_thought = max(200, budget // 6)
    lines = [_line(entry, per_thought) for entry in shown]
    kept = [lines[0]]
    tail: list[str] = []
    used = len(lines[0])
    for line in reversed(lines[1:]):
        if used + len(line) > budget:
            break
        tail.append(line)
        used += len(line)
    omitted = len(lines) - 1 - len(tail)
    if omitted:
        kept.append(f"({omitted} thoughts omitted)")
    kept += reversed(tail)
    others = sorted({b for b in state.branches if b != branch})
    note = f"\n(Other branches, not shown: {', '.join(others)})" if others else ""
    return f"Thoughts so far ({len(shown)}):\n" + "\n".join(kept) + note


def _on_branch(entry: ThoughtEntry) -> bool:
    return entry.kind in ("branch.opened", "branch.extended")


def _line(entry: ThoughtEntry, limit: int) -> str:
    marks = []
    if entry.kind == "thought.revised":
        marks.append(
            f"revises thought {entry.revises_thought}" if entry.revises_thought else "revision"
        )
    if _on_branch(entry):
        marks.append(f"branch {entry.branch_id!r} from thought {entry.branch_from_thought}")
    # Marks of the definition of a thought that the lines above do not word, as given.
    marks += _worded(entry.more)
    mark = f" ({'; '.join(marks)})" if marks else ""
    return f"[{entry.thought_number}]{mark} {_cut(entry.thought, limit)}"


def _worded(marks: Mapping[str, object]) -> list[str]:
    return [f"{name.replace('_', ' ')}: {value}" for name, value in marks.items()]


def _task(request: ThinkCommand) -> str:
    total = max(request.total_thoughts, request.thought_number)
    task = f"Write thought {request.thought_number} of about {total}."
    if request.branch_from_thought is not None and request.branch_id:
        task += (
            f" It belongs to branch {request.branch_id!r}, an alternative line of reasoning "
            f"from thought {request.branch_from_thought}."
        )
    elif request.is_revision:
        target = request.revises_thought
        task += (
            f" It revises {f'thought {target}' if target else 'an earlier thought'}: say what "
            "was wrong and what replaces it."
        )
    if not request.next_thought_needed:
        task += " It is the last thought: conclude."
    elif request.needs_more_thoughts:
        task += " More thoughts than estimated are needed: keep going."
    # The caller's marks for this thought that the sentences above do not word, as its line in a
    # later prompt shows them. Only a field added to the definition has any, so every prompt the
    # shipped definition builds is unchanged (no new PROMPT_VERSION).
    given = _worded(more_marks(lambda name: getattr(request, name, None)))
    if given:
        task += f" Its marks: {'; '.join(given)}."
    return task


def _cut(text: str, limit: int) -> str:
    limit = max(limit, 40)
    return text if len(text) <= limit else text[: limit - len(_CUT)] + _CUT


__all__ = [
    "ANSWER_SCHEMA",
    "DEFAULT_MAX_PROMPT_CHARS",
    "PROMPT_VERSION",
    "PromptMessage",
    "ThoughtPrompt",
    "build_prompt",
    "prompt_sha256",
]
