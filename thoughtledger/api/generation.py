"""``sequential_thinking_external`` (the MCP API reference): a model writes the next thought.

The caller's ``thought`` is the problem on a session's first thought and guidance afterwards. The
use case reads the session, builds the prompt from it (:mod:`thoughtledger.api.prompt`),
asks the :class:`ThoughtWriter` it is given and records the answer through :meth:`Ledger.think`
as one ``thought.generated`` event: the model's thought with every field a thought has, the
guidance, and how it was written (model, provider, temperature, tokens, latency, the prompt's hash
and the session version it was built from). Generation happens before anything is appended, so a
failure leaves the ledger as it was; the append is a single event, so nothing is ever half-recorded.

The writer is a port: the language-model client that implements it
(:class:`thoughtledger.adapters.llm.LLMWriter`) is an adapter the facade does not import, and
``thoughtledger.think_external`` supplies one configured from the environment.

If another writer moves the session while the model writes, the thought is still recorded (after
theirs, classified afresh): ``context_version`` says which state the model saw.

``use_llm=False`` is the MCP API reference's manual mode: the caller's ``thought`` is recorded as
written.
"""

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from thoughtledger.api.errors import GenerationError, ProviderNotConfiguredError
from thoughtledger.api.prompt import DEFAULT_MAX_PROMPT_CHARS, ThoughtPrompt, build_prompt
from thoughtledger.api.recording import ThinkOutcome
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.decide import Generated, ThinkCommand, parse_command
from thoughtledger.ledger.errors import InvalidInputError, InvalidThoughtError
from thoughtledger.ledger.events import Generation
from thoughtledger.ledger.masking import mask_secrets
from thoughtledger.projections.state import SessionState, empty

GENERATION_FAILED = "Failed to generate thought with LLM"
"""The MCP API reference's error for a failed generation; the provider's message follows."""

NO_WRITER = "no model client was given to write the thought"
"""Why ``use_llm`` failed when nobody can write the thought (the caller names the fix)."""


@dataclass(frozen=True, slots=True)
class WrittenThought:
    """A model's thought and how it was written (everything but what the ledger adds)."""

    text: str
    generation: Generation


class ThoughtWriter(Protocol):
    """Writes one thought for a prompt (the LLM adapter's ``LLMWriter`` is the real one)."""

    async def write(
        self, prompt: ThoughtPrompt, *, model: str | None, temperature: float | None
    ) -> WrittenThought:
        """Return the model's thought for ``prompt``.

        Raises:
            GenerationError: No thought could be had (the message says why).
        """
        ...


DEFAULT_TEMPERATURE = 0.7
"""The MCP API reference's default temperature."""


async def think_with_writer(
    ledger: Ledger,
    session_id: str | None,
    arguments: Mapping[str, Any] | ThinkCommand,
    *,
    writer: ThoughtWriter | None = None,
    use_llm: bool = True,
    model: str | None = None,
    temperature: float | None = DEFAULT_TEMPERATURE,
    clear: bool = False,
    metadata: Mapping[str, str] | None = None,
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
    owner: str | None = None,
) -> ThinkOutcome:
    """Record the next thought, written by ``writer`` (or, in manual mode, by the caller).

    Args:
        ledger: Where the thought is recorded.
        session_id: The session to continue; ``None`` starts a new one.
        arguments: The call's fields (snake_case): ``thought`` is the problem (first thought) or
            guidance (later ones); the others are the new thought's numbers, revision and branch
            fields, as for :meth:`Ledger.think`.
        writer: Who writes the thought when ``use_llm`` is true (the caller opens and closes
            it); ``None`` is allowed only in manual mode.
        use_llm: ``False`` records ``thought`` as written (the MCP API reference's manual mode).
        model: A model name or alias (``None``: ``normal``, the MCP API reference's
            ``LUX_MODEL_NORMAL``).
        temperature: Sampling temperature, 0 to 2 (``None``: the model's default).
        clear: Retire ``session_id`` first and start afresh (the model then sees no history).
        metadata: Facts to record if a session starts here.
        max_prompt_chars: Roughly how long the prompt may be, in characters.
        owner: The principal recording (see :meth:`Ledger.think`).

    Returns:
        The outcome; for a generated thought its entry carries ``guidance`` and ``generation``.

    Raises:
        InvalidThoughtError: The arguments break a rule; nothing was asked or appended.
        InvalidInputError: A malformed session id, model or temperature; nothing was appended.
        ProviderNotConfiguredError: No ``writer`` was given, or the model's provider has no key
            ("OpenAI API key not configured", "OpenRouter API key not configured"); nothing was
            appended.
        GenerationError: The model could not write the thought ("Failed to generate thought
            with LLM: ..." with the provider's message); nothing was appended.
        StoreError: The store failed; nothing was appended.
    """
    request = (
        arguments
        if isinstance(arguments, ThinkCommand)
        else parse_command(arguments, max_thought_bytes=ledger.max_thought_bytes)
    )
    if not use_llm:
        return await ledger.think(session_id, request, clear=clear, metadata=metadata, owner=owner)
    if writer is None:
        raise ProviderNotConfiguredError(NO_WRITER)
    asked = await prepare_generation(
        ledger, session_id, request, model, temperature, clear=clear, max_chars=max_prompt_chars
    )
    try:
        written = await writer.write(asked.prompt, model=asked.model, temperature=asked.temperature)
    except GenerationError as exc:
        raise masked(exc) from None
    return await record_generation(
        ledger, session_id, request, written, clear=clear, metadata=metadata, owner=owner
    )


@dataclass(frozen=True, slots=True)
class Asked:
    """What a writer is asked: the prompt, and the model and temperature, checked."""

    prompt: ThoughtPrompt
    model: str | None
    temperature: float | None


async def prepare_generation(
    ledger: Ledger,
    session_id: str | None,
    request: ThinkCommand,
    model: object,
    temperature: object,
    *,
    clear: bool,
    max_chars: int,
) -> Asked:
    """Check the model and temperature and build the prompt from the session as it is now.

    Raises:
        InvalidInputError: A malformed model or temperature.
        StoreError: The store failed.
    """
    checked_temperature = _check_temperature(temperature)
    checked_model = _check_model(model)
    context = await _context(ledger, session_id, clear=clear)
    prompt = build_prompt(context, request, max_chars=max_chars)
    return Asked(prompt, checked_model, checked_temperature)


async def record_generation(
    ledger: Ledger,
    session_id: str | None,
    request: ThinkCommand,
    written: WrittenThought,
    *,
    clear: bool,
    metadata: Mapping[str, str] | None,
    owner: str | None,
) -> ThinkOutcome:
    """Record the model's thought as one ``thought.generated`` event, and log it.

    Raises:
        GenerationError: The model's thought breaks a rule (too long...); nothing appended.
        StoreError: The store failed; nothing appended.
    """
    command = model_command(request, written.text, ledger.max_thought_bytes)
    outcome = await ledger.think(
        session_id,
        command,
        clear=clear,
        metadata=metadata,
        generated=Generated(guidance=request.thought, generation=written.generation),
        owner=owner,
    )
    generation = written.generation
    _log_generated(
        session_id=outcome.session_id,
        version=outcome.entry.version,
        model=generation.model,
        provider=generation.provider,
        prompt_tokens=generation.prompt_tokens,
        completion_tokens=generation.completion_tokens,
        latency_ms=generation.latency_ms,
        attempts=generation.attempts,
    )
    return outcome


def _log_generated(**facts: object) -> None:
    # structlog is imported here, on the first generated thought, not by every start of a
    # server; the entry point's choice of destination applies when it is (adapters.common.logs).
    import structlog

    if structlog.is_configured():
        structlog.get_logger(__name__).info("thought_generated", **facts)
        return
    # Used as a library, with no logging set up: the standard library's logger, which prints
    # nothing at this level until the program asks for it (structlog's default would print).
    shown = " ".join(f"{key}={value}" for key, value in facts.items())
    logging.getLogger(__name__).info("thought_generated %s", shown)


def masked(exc: GenerationError) -> GenerationError:
    """``exc`` with credentials masked in its message (``exc`` itself when it holds none).

    :class:`~thoughtledger.adapters.llm.LLMWriter` masks its provider's messages itself; a writer of
    the caller's own may not, and its message reaches the model and the logs all the same. Raise
    the result ``from None``: the original, secret and all, would be printed with a traceback.
    """
    text = mask_secrets(str(exc))
    if text == str(exc):
        return exc
    return type(exc)(text, status=exc.status, attempts=exc.attempts)


async def _context(ledger: Ledger, session_id: str | None, *, clear: bool) -> SessionState:
    """The state the thought will extend: empty when it will start a fresh session."""
    if session_id is None or clear:
        return empty(session_id or "")
    # The thought about to be recorded retires an idle session first: record that now, so the
    # prompt is built from the session the thought will really extend.
    if not await ledger.expire_idle(session_id):
        return empty(session_id)
    state = await ledger.state(session_id)
    if state.ended is not None:
        # A retired session's next thought starts a fresh session, which has no history yet.
        return empty(session_id)
    return state


def model_command(request: ThinkCommand, text: str, max_thought_bytes: int) -> ThinkCommand:
    """The command recording the model's ``text`` with the caller's fields.

    Raises:
        GenerationError: The text cannot be recorded (too long...), in the words of the rule.
    """
    fields = request.model_dump(exclude_none=True)
    fields["thought"] = text
    try:
        return parse_command(fields, max_thought_bytes=max_thought_bytes)
    except InvalidThoughtError as exc:
        raise GenerationError(
            f"{GENERATION_FAILED}: the model's thought cannot be recorded: {exc}"
        ) from exc


def _check_temperature(temperature: object) -> float | None:
    if temperature is None:
        return None
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not math.isfinite(temperature)
        or not 0 <= temperature <= 2
    ):
        raise InvalidInputError(f"temperature must be a number from 0 to 2, not {temperature!r}")
    return float(temperature)


def _check_model(model: object) -> str | None:
    if model is None:
        return None
    if not isinstance(model, str) or not model.strip():
        raise InvalidInputError("model must be a non-empty model name or alias")
    return model.strip()


__all__ = [
    "DEFAULT_TEMPERATURE",
    "GENERATION_FAILED",
    "NO_WRITER",
    "Asked",
    "ThoughtWriter",
    "WrittenThought",
    "masked",
    "model_command",
    "prepare_generation",
    "record_generation",
    "think_with_writer",
]
