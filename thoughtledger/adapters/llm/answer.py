"""Reading a chat completion: the thought, and what the answer says of itself.

The ``openai`` client builds response objects without validating them (a body with no choices,
or a string where an object belongs, comes through), so every field is checked here, and an
answer that is not the JSON asked for is taken as plain text: then there is no confidence, since
a confidence is never invented.
"""

import json
import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Failure:
    """Why an attempt gave no thought, and whether another attempt may."""

    reason: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """A usable answer: the thought and the figures the provider reported."""

    thought: str
    structured: bool
    confidence: float | None
    reasoning_hint: str | None
    served_model: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    finish_reason: str | None
    response_id: str | None


def read_completion(completion: object, *, structured: bool) -> Answer | Failure:
    """The answer in ``completion``, or why it is unusable (and whether to ask again)."""
    # Deferred: importing openai costs half a second (see thoughtledger.adapters.llm.client).
    from openai.types.chat import ChatCompletion

    if not isinstance(completion, ChatCompletion):
        return Failure("malformed answer from the provider: not a chat completion", True, 200)
    choices = completion.choices
    if not isinstance(choices, list) or not choices:
        return Failure("malformed answer from the provider: no choices", True, 200)
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str) or not content.strip():
        refusal = getattr(message, "refusal", None)
        if isinstance(refusal, str) and refusal.strip():
            return Failure(f"the model refused: {refusal.strip()}", False, 200)
        return Failure("the model's answer was empty", True, 200)
    thought, confidence, hint, was_structured = parse_answer(content, structured=structured)
    usage = completion.usage
    extra = getattr(usage, "model_extra", None)
    return Answer(
        thought=thought,
        structured=was_structured,
        confidence=confidence,
        reasoning_hint=hint,
        served_model=_text(completion.model),
        prompt_tokens=_tokens(getattr(usage, "prompt_tokens", None)),
        completion_tokens=_tokens(getattr(usage, "completion_tokens", None)),
        cost=_non_negative(extra.get("cost") if isinstance(extra, dict) else None),
        finish_reason=_text(getattr(choice, "finish_reason", None)),
        response_id=_text(completion.id),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _tokens(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _non_negative(value: object) -> float | None:
    """A finite number >= 0 as a float, or ``None`` for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def parse_answer(content: str, *, structured: bool) -> tuple[str, float | None, str | None, bool]:
    """Read a model's answer: ``(thought, confidence, reasoning_hint, was_structured)``.

    A structured answer is a JSON object (optionally in a Markdown code fence) with a non-empty
    string ``thought``; its ``confidence`` counts only when it is a number from 0 to 1 and its
    ``reasoning_hint`` only when it is non-empty text. Anything else is plain text: the whole
    answer is the thought, with no confidence and no hint.
    """
    text = content.strip()
    if not structured:
        return text, None, None, False
    body = text
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(body)
    except ValueError:
        return text, None, None, False
    thought = data.get("thought") if isinstance(data, dict) else None
    if not isinstance(thought, str) or not thought.strip():
        return text, None, None, False
    confidence = _non_negative(data.get("confidence"))  # a finite number >= 0, or None
    if confidence is not None and confidence > 1:
        confidence = None  # not on the scale asked for: unknown, not guessed (85 -> 0.85?)
    hint = data.get("reasoning_hint")
    hint = hint.strip() if isinstance(hint, str) and hint.strip() else None
    return thought.strip(), confidence, hint, True


__all__ = ["Answer", "Failure", "parse_answer", "read_completion"]
