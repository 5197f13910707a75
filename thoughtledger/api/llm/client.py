"""Asking a model for a thought over OpenAI's chat-completions protocol, with the ``openai`` client.

:class:`LLMWriter` sends a :class:`~thoughtledger.api.ThoughtPrompt` to the endpoint the
settings choose, retries what may pass (429, 5xx, timeouts, unreachable servers, malformed or empty
answers) with exponential backoff and jitter (honouring ``Retry-After``), and fails at once on what
will not (a bad key, an unknown model). What a failed attempt says is masked
(:mod:`thoughtledger.ledger.masking`) before it is logged or raised: providers echo keys back. It
asks for a structured answer and steps down when an endpoint refuses one: ``json_schema``, then
``json_object``, then plain text (remembered per endpoint and model); a model that refuses a
temperature (reasoning models accept only their default) is asked again without one. Any answer that
is not the JSON asked for is taken as plain text, and then there is no confidence: it is never
invented.

``openai`` is imported on first use: it costs half a second, which a server or a command that
never generates should not pay.
"""

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from thoughtledger.api import (
    ANSWER_SCHEMA,
    GENERATION_FAILED,
    ClosedOnExit,
    GenerationError,
    PromptMessage,
    ThoughtPrompt,
    WrittenThought,
    get_logger,
    prompt_sha256,
)
from thoughtledger.api.llm.answer import Failure, read_completion
from thoughtledger.api.llm.config import Endpoint, LLMSettings, Structured
from thoughtledger.ledger.events import Generation
from thoughtledger.ledger.masking import mask_secrets

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam, completion_create_params

_STEP_DOWN: dict[Structured, Structured] = {"json_schema": "json_object", "json_object": "off"}

log = get_logger(__name__)


class LLMWriter(ClosedOnExit):
    """Writes thoughts with the model an endpoint serves; one per process is enough.

    Args:
        settings: Fixed settings; by default they are read from the environment at each call,
            so a process picks up a key set after it started.
        environ: Where to read settings from when ``settings`` is not given.
        sleep: How to wait between retries (tests pass one that records the delays).
        clock: A monotonic clock in seconds, for latency.
    """

    def __init__(
        self,
        settings: LLMSettings | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._settings = settings
        self._environ = environ
        self._sleep = sleep
        self._clock = clock
        self._clients: dict[tuple[str, str, float], openai.AsyncOpenAI] = {}
        self._refused: dict[tuple[str, str], set[str]] = {}

    def settings(self) -> LLMSettings:
        """The settings in force now.

        Raises:
            ProviderNotConfiguredError: An environment variable holds an unusable value.
        """
        return self._settings or LLMSettings.from_env(self._environ)

    async def write(
        self, prompt: ThoughtPrompt, *, model: str | None, temperature: float | None
    ) -> WrittenThought:
        """Ask the model for the thought ``prompt`` describes.

        Args:
            prompt: What to ask.
            model: A model name or alias (``None``: ``normal``, the MCP API reference's
                ``LUX_MODEL_NORMAL``).
            temperature: The sampling temperature (``None``: the model's default).

        Raises:
            ProviderNotConfiguredError: The model's provider has no key (the MCP API reference's
                messages).
            GenerationError: The endpoint failed for good, or every attempt failed; the message
                starts with "Failed to generate thought with LLM" and ends with the provider's.
        """
        settings = self.settings()
        endpoint = settings.resolve(model)
        try:
            import openai  # deferred: see the module docstring
        except ImportError as exc:
            raise GenerationError(
                f"{GENERATION_FAILED}: the openai package is not installed; install it with "
                "pip install 'thoughtledger[llm]'"
            ) from exc

        client = self._client_for(endpoint, settings.timeout)
        refused = self._refused.setdefault((endpoint.base_url, endpoint.model), set())
        attempts = retries = 0
        while True:
            mode = _mode(settings.structured, refused)
            sent_temperature = None if "temperature" in refused else temperature
            messages = prompt.messages(structured=mode != "off")
            attempts += 1
            started = self._clock()
            failure: Failure
            try:
                completion = await client.chat.completions.create(
                    model=endpoint.model,
                    messages=_chat_messages(messages),
                    temperature=openai.omit if sent_temperature is None else sent_temperature,
                    response_format=_response_format(mode),
                    extra_headers=dict(endpoint.headers) or None,
                )
            except openai.APIStatusError as exc:
                capability = _refused_capability(exc, mode, sent_temperature)
                if capability is not None:
                    # Not a failure: this endpoint lacks a feature; ask again without it.
                    log.info("llm_capability_refused", model=endpoint.model, refused=capability)
                    refused.add(capability)
                    continue
                failure = _status_failure(exc)
            except openai.APITimeoutError:
                failure = Failure(f"no answer within {settings.timeout:g} s", retryable=True)
            except openai.APIConnectionError as exc:
                failure = Failure(f"cannot reach {endpoint.base_url}: {exc}", retryable=True)
            except ValueError as exc:
                # The client decodes a body that claims to be JSON and raises this when it is not.
                failure = Failure(f"malformed answer from the provider: {exc}", retryable=True)
            except openai.OpenAIError as exc:
                failure = Failure(str(exc), retryable=False)
            else:
                latency_ms = max(0, round((self._clock() - started) * 1000))
                read = read_completion(completion, structured=mode != "off")
                if isinstance(read, Failure):
                    failure = read
                else:
                    generation = Generation(
                        model=endpoint.model,
                        provider=endpoint.provider,
                        served_model=read.served_model,
                        temperature=sent_temperature,
                        prompt_sha256=prompt_sha256(messages),
                        prompt_version=prompt.version,
                        context_version=prompt.context_version,
                        structured=read.structured,
                        prompt_tokens=read.prompt_tokens,
                        completion_tokens=read.completion_tokens,
                        cost=read.cost,
                        latency_ms=latency_ms,
                        attempts=attempts,
                        finish_reason=read.finish_reason,
                        response_id=read.response_id,
                        confidence=read.confidence,
                        reasoning_hint=read.reasoning_hint,
                    )
                    return WrittenThought(read.thought, generation)
            # Providers echo keys back ("Incorrect API key provided: sk-..."); this reason is
            # what the model and the logs will read.
            failure = replace(failure, reason=mask_secrets(failure.reason, _keys(settings)))
            if not failure.retryable or retries >= settings.max_retries:
                raise GenerationError(
                    _message(failure, attempts), status=failure.status, attempts=attempts
                )
            retries += 1
            delay = _delay(settings, retries, failure.retry_after)
            log.warning(
                "llm_attempt_failed",
                model=endpoint.model,
                attempt=attempts,
                reason=failure.reason,
                retry_in=round(delay, 3),
            )
            await self._sleep(delay)

    async def aclose(self) -> None:
        """Close the HTTP clients opened so far."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()

    def _client_for(self, endpoint: Endpoint, timeout: float) -> "openai.AsyncOpenAI":
        key = (endpoint.base_url, endpoint.api_key, timeout)
        client = self._clients.get(key)
        if client is None:
            from openai import AsyncOpenAI  # deferred: see the module docstring

            # Retries are ours (counted, recorded, and with their own backoff), so none in here.
            client = AsyncOpenAI(
                api_key=endpoint.api_key,
                base_url=endpoint.base_url,
                timeout=timeout,
                max_retries=0,
            )
            self._clients[key] = client
        return client


def _keys(settings: LLMSettings) -> tuple[str | None, ...]:
    return (settings.openai_api_key, settings.openrouter_api_key, settings.local_api_key)


def _mode(configured: Structured, refused: set[str]) -> Structured:
    mode = configured
    while mode != "off" and mode in refused:
        mode = _STEP_DOWN[mode]
    return mode


def _chat_messages(messages: list[PromptMessage]) -> "list[ChatCompletionMessageParam]":
    chat: list[ChatCompletionMessageParam] = []
    for role, content in messages:
        if role == "system":
            chat.append({"role": "system", "content": content})
        else:
            chat.append({"role": "user", "content": content})
    return chat


def _response_format(
    mode: Structured,
) -> "completion_create_params.ResponseFormat | openai.Omit":
    import openai  # deferred: see the module docstring

    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "next_thought", "strict": True, "schema": ANSWER_SCHEMA},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    return openai.omit


def _refused_capability(
    exc: "openai.APIStatusError", mode: Structured, temperature: float | None
) -> str | None:
    """The feature a 400/422 says the endpoint lacks, if it names one we can do without."""
    if exc.status_code not in (400, 422):
        return None
    said = (_provider_message(exc) + " " + str(_error_field(exc, "param") or "")).lower()
    if mode != "off" and any(
        word in said for word in ("response_format", "json_schema", "json_object", "structured")
    ):
        return mode
    if temperature is not None and "temperature" in said:
        return "temperature"
    return None


def _status_failure(exc: "openai.APIStatusError") -> Failure:
    status = exc.status_code
    retryable = status in (408, 409, 429) or status >= 500
    return Failure(
        f"HTTP {status}: {_provider_message(exc)}",
        retryable=retryable,
        status=status,
        retry_after=_retry_after(exc.response.headers) if retryable else None,
    )


def _provider_message(exc: "openai.APIStatusError") -> str:
    message = _error_field(exc, "message")
    if isinstance(message, str) and message.strip():
        return message.strip()
    if isinstance(exc.body, str) and exc.body.strip():
        return exc.body.strip()[:500]
    return exc.message


def _error_field(exc: "openai.APIStatusError", name: str) -> object:
    # The client hands over the "error" object of an OpenAI-shaped body, or the body itself.
    body: Any = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    return body.get(name) if isinstance(body, dict) else None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue  # an HTTP date: rare from these APIs, and the backoff covers it
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _delay(settings: LLMSettings, retry: int, retry_after: float | None) -> float:
    backoff = min(settings.max_backoff, settings.backoff * 2.0 ** (retry - 1))
    # Jitter spreads clients that failed together; it needs no cryptographic randomness.
    delay = backoff * (0.5 + random.random() / 2)  # noqa: S311
    if retry_after is not None:
        delay = max(delay, min(retry_after, settings.max_backoff))
    return delay


def _message(failure: Failure, attempts: int) -> str:
    if attempts == 1 or not failure.retryable:
        return f"{GENERATION_FAILED}: {failure.reason}"
    return f"{GENERATION_FAILED}: {attempts} attempts failed; the last: {failure.reason}"


__all__ = ["LLMWriter"]
