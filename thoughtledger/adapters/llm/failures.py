"""How a failed request reads: retry or not, after how long, and what the caller is told.

Shared by the plain and the streamed requests of :class:`~thoughtledger.adapters.llm.LLMWriter`.
"""

import math
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from thoughtledger.adapters.llm.answer import Failure
from thoughtledger.adapters.llm.config import LLMSettings, Structured
from thoughtledger.api import GENERATION_FAILED

if TYPE_CHECKING:
    import openai


def refused_capability(
    exc: "openai.APIStatusError", mode: Structured, temperature: float | None
) -> str | None:
    """The feature a 400/422 says the endpoint lacks, if it names one we can do without."""
    if exc.status_code not in (400, 422):
        return None
    said = (_provider_message(exc) + " " + str(_error_field(exc, "param") or "")).lower()
    if "stream_options" in said:
        return "stream_options"  # sent only when streaming; the usage figures go unreported
    if mode != "off" and any(
        word in said for word in ("response_format", "json_schema", "json_object", "structured")
    ):
        return mode
    if temperature is not None and "temperature" in said:
        return "temperature"
    return None


def status_failure(exc: "openai.APIStatusError") -> Failure:
    """The failure an HTTP error status stands for: 408, 409, 429 and 5xx may pass."""
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


def delay_for(settings: LLMSettings, retry: int, retry_after: float | None) -> float:
    """Seconds to wait before retry number ``retry``: backoff with jitter, ``Retry-After`` kept."""
    backoff = min(settings.max_backoff, settings.backoff * 2.0 ** (retry - 1))
    # Jitter spreads clients that failed together; it needs no cryptographic randomness.
    delay = backoff * (0.5 + random.random() / 2)  # noqa: S311
    if retry_after is not None:
        delay = max(delay, min(retry_after, settings.max_backoff))
    return delay


def failure_message(failure: Failure, attempts: int) -> str:
    """What the caller reads of the last failure, in the MCP API reference's words."""
    if attempts == 1 or not failure.retryable:
        return f"{GENERATION_FAILED}: {failure.reason}"
    return f"{GENERATION_FAILED}: {attempts} attempts failed; the last: {failure.reason}"


__all__ = ["delay_for", "failure_message", "refused_capability", "status_failure"]
