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
import contextlib
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from thoughtledger.adapters.common.logs import get_logger
from thoughtledger.adapters.llm.answer import Answer, Failure, read_completion
from thoughtledger.adapters.llm.config import Endpoint, LLMSettings, Structured
from thoughtledger.adapters.llm.failures import (
    delay_for,
    failure_message,
    refused_capability,
    status_failure,
)
from thoughtledger.adapters.llm.streaming import stream_attempt
from thoughtledger.api import (
    ANSWER_SCHEMA,
    GENERATION_FAILED,
    ClosedOnExit,
    GenerationError,
    PromptMessage,
    ThoughtPrompt,
    WrittenThought,
    prompt_sha256,
)
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
                ``normal``, ``THOUGHTLEDGER_LLM_MODEL_NORMAL``).
            temperature: The sampling temperature (``None``: the model's default).

        Raises:
            ProviderNotConfiguredError: The model's provider has no key (the MCP API reference's
                messages).
            GenerationError: The endpoint failed for good, or every attempt failed; the message
                starts with "Failed to generate thought with LLM" and ends with the provider's.
        """
        async with contextlib.aclosing(self._run(prompt, model, temperature, None)) as items:
            async for item in items:
                if isinstance(item, WrittenThought):
                    return item
        raise AssertionError("an attempt loop ends with a thought or an error")  # pragma: no cover

    def stream(
        self,
        prompt: ThoughtPrompt,
        *,
        model: str | None,
        temperature: float | None,
        max_bytes: int,
    ) -> AsyncGenerator[str | WrittenThought]:
        """Ask with ``stream: true``: the thought's text in pieces, then the whole thought.

        The pieces come as the model writes them; the :class:`WrittenThought` that ends the
        iteration holds the text they add up to. Failed attempts are retried as :meth:`write`
        retries them while nothing has been given back; once a piece has been, a failure is
        final (the pieces cannot be taken back). Close the iterator (``contextlib.aclosing``)
        to stop early: the request is closed.

        Args:
            prompt: What to ask.
            model: A model name or alias (``None``: ``normal``).
            temperature: The sampling temperature (``None``: the model's default).
            max_bytes: The longest thought the caller will record, in UTF-8 bytes; a longer
                answer is cut off (see :mod:`thoughtledger.adapters.llm.streaming`).

        Raises:
            ProviderNotConfiguredError: The model's provider has no key.
            GenerationError: As :meth:`write`; also when the stream breaks after a piece was
                given back.
        """
        return self._run(prompt, model, temperature, max_bytes)

    async def _run(
        self,
        prompt: ThoughtPrompt,
        model: str | None,
        temperature: float | None,
        stream_bytes: int | None,
    ) -> AsyncGenerator[str | WrittenThought]:
        """The attempts: streamed when ``stream_bytes`` (the thought's bound) is given."""
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
        attempts = retries = given = 0
        while True:
            mode = _mode(settings.structured, refused)
            sent_temperature = None if "temperature" in refused else temperature
            messages = prompt.messages(structured=mode != "off")
            request: dict[str, Any] = {
                "model": endpoint.model,
                "messages": _chat_messages(messages),
                "temperature": openai.omit if sent_temperature is None else sent_temperature,
                "response_format": _response_format(mode),
                "extra_headers": dict(endpoint.headers) or None,
            }
            attempts += 1
            started = self._clock()
            failure = Failure("the provider ended the stream without an answer", retryable=True)
            read: Answer | Failure | None = None
            try:
                if stream_bytes is None:
                    completion = await client.chat.completions.create(**request)
                    read = read_completion(completion, structured=mode != "off")
                else:
                    if "stream_options" not in refused:
                        request["stream_options"] = {"include_usage": True}
                    pieces = stream_attempt(
                        client,
                        request,
                        structured=mode != "off",
                        max_bytes=stream_bytes,
                        timeout=settings.timeout,
                    )
                    async with contextlib.aclosing(pieces) as items:
                        async for item in items:
                            if isinstance(item, str):
                                given += len(item)
                                yield item
                            else:
                                read = item
            except openai.APIStatusError as exc:
                capability = refused_capability(exc, mode, sent_temperature)
                if capability is not None:
                    # Not a failure: this endpoint lacks a feature; ask again without it.
                    log.info("llm_capability_refused", model=endpoint.model, refused=capability)
                    refused.add(capability)
                    continue
                failure = status_failure(exc)
            except openai.APITimeoutError:
                failure = Failure(f"no answer within {settings.timeout:g} s", retryable=True)
            except openai.APIConnectionError as exc:
                failure = Failure(f"cannot reach {endpoint.base_url}: {exc}", retryable=True)
            except ValueError as exc:
                # The client decodes a body that claims to be JSON and raises this when it is not.
                failure = Failure(f"malformed answer from the provider: {exc}", retryable=True)
            except openai.OpenAIError as exc:
                failure = Failure(str(exc), retryable=False)
            if isinstance(read, Answer):
                latency_ms = max(0, round((self._clock() - started) * 1000))
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
                yield WrittenThought(read.thought, generation)
                return
            if read is not None:
                failure = read
            # Providers echo keys back ("Incorrect API key provided: sk-..."); this reason is
            # what the model and the logs will read.
            failure = replace(failure, reason=mask_secrets(failure.reason, _keys(settings)))
            if given:
                # Text already given back cannot be taken back: another attempt would repeat it.
                failure = replace(
                    failure,
                    reason=f"the stream broke after {given} characters: {failure.reason}",
                    retryable=False,
                )
            if not failure.retryable or retries >= settings.max_retries:
                raise GenerationError(
                    failure_message(failure, attempts), status=failure.status, attempts=attempts
                )
            retries += 1
            delay = delay_for(settings, retries, failure.retry_after)
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


__all__ = ["LLMWriter"]
