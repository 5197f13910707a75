"""Which endpoint, key and model a generation uses, read from the environment.

Providers (all speak OpenAI's chat-completions protocol):

- ``local``: any compatible server (Ollama, vLLM, llama.cpp...) at ``THOUGHTLEDGER_LLM_BASE_URL``;
  a key is optional (``THOUGHTLEDGER_LLM_API_KEY``). When the base URL is set, every model goes
  there.
- ``openrouter``: models named ``vendor/model`` (``anthropic/claude-sonnet-4``); needs
  ``OPENROUTER_API_KEY``; ``OPENROUTER_BASE_URL`` defaults to https://openrouter.ai/api/v1.
- ``openai``: every other model name; needs ``OPENAI_API_KEY``; ``OPENAI_BASE_URL`` optional.

``THOUGHTLEDGER_LLM_PROVIDER`` (``openai``, ``openrouter`` or ``local``) overrides the choice.

Model aliases, as in the MCP API reference (which defaults ``model`` to ``LUX_MODEL_NORMAL``):
``normal``, ``reasoning``, ``mini``, ``opus``, ``sonnet`` and ``grok`` name the models in
``THOUGHTLEDGER_LLM_MODEL_NORMAL``, ``..._REASONING``, ``..._MINI``, ``..._OPUS``, ``..._SONNET``
and ``..._GROK`` (see :data:`ALIASES` for the defaults); those names, and the reference's
``LUX_MODEL_*``, are accepted as model names too. Requests time out after
``THOUGHTLEDGER_LLM_TIMEOUT_SECS`` (120) and are retried ``THOUGHTLEDGER_LLM_MAX_RETRIES`` times
(3) on 429, 5xx, timeouts and malformed answers, backing off from
``THOUGHTLEDGER_LLM_BACKOFF_SECS`` (0.5) doubling per retry. ``THOUGHTLEDGER_LLM_STRUCTURED``
chooses how a structured answer is asked for: ``json_schema`` (default), ``json_object`` or
``off`` (plain text).

The variables' earlier names (:data:`FORMER_NAMES`: ``LUX_MODEL_*``,
``LUX_REQUEST_TIMEOUT_SECS``, ``LUX_MAX_RETRIES``) are still read when the new one is unset,
with a warning, once, naming the new one.
"""

import logging
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar, get_args

from thoughtledger.api import ProviderNotConfiguredError

Provider = Literal["openai", "openrouter", "local"]
Structured = Literal["json_schema", "json_object", "off"]

OPENAI_KEY_MISSING = "OpenAI API key not configured"
"""The MCP API reference's error when an OpenAI model is asked for and ``OPENAI_API_KEY`` is not
set."""
OPENROUTER_KEY_MISSING = "OpenRouter API key not configured"
"""The MCP API reference's error when an OpenRouter model is asked for and ``OPENROUTER_API_KEY`` is
not set."""

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
LOCAL_PLACEHOLDER_KEY = "no-key"
"""Sent to a local server configured without a key (the client library insists on one)."""

DEFAULT_ALIAS = "normal"

_Getter = Callable[[str], str | None]
_Option = TypeVar("_Option", bound=str)

ALIASES: dict[str, tuple[str, str]] = {
    "normal": ("THOUGHTLEDGER_LLM_MODEL_NORMAL", "gpt-5"),
    "reasoning": ("THOUGHTLEDGER_LLM_MODEL_REASONING", "gpt-5"),
    "mini": ("THOUGHTLEDGER_LLM_MODEL_MINI", "gpt-5-mini"),
    "opus": ("THOUGHTLEDGER_LLM_MODEL_OPUS", "anthropic/claude-opus-4.1"),
    "sonnet": ("THOUGHTLEDGER_LLM_MODEL_SONNET", "anthropic/claude-sonnet-4"),
    "grok": ("THOUGHTLEDGER_LLM_MODEL_GROK", "x-ai/grok-4"),
}
"""Alias -> (environment variable naming its model, model when the variable is unset)."""
TIMEOUT_ENV = "THOUGHTLEDGER_LLM_TIMEOUT_SECS"
MAX_RETRIES_ENV = "THOUGHTLEDGER_LLM_MAX_RETRIES"

FORMER_NAMES: dict[str, str] = {
    **{
        variable: "LUX_MODEL_" + variable.removeprefix("THOUGHTLEDGER_LLM_MODEL_")
        for variable, _default in ALIASES.values()
    },
    TIMEOUT_ENV: "LUX_REQUEST_TIMEOUT_SECS",
    MAX_RETRIES_ENV: "LUX_MAX_RETRIES",
}
"""Variable -> the name it had before (still read when the variable is unset, with a warning)."""

_log = logging.getLogger(__name__)
_warned: set[str] = set()


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where one generation goes.

    Attributes:
        provider: Which kind of endpoint.
        base_url: The API root (ends in ``/v1`` for most servers).
        api_key: The bearer key (a placeholder for a local server without one).
        model: The model to ask for, aliases resolved.
        headers: Extra headers (OpenRouter's app attribution).
    """

    provider: Provider
    base_url: str
    api_key: str
    model: str
    headers: Mapping[str, str]

    def __repr__(self) -> str:
        # Keys never reach logs or error messages through a repr.
        return (
            f"Endpoint(provider={self.provider!r}, base_url={self.base_url!r}, "
            f"model={self.model!r})"
        )


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Everything the provider layer reads from the environment (see the module docstring)."""

    openai_api_key: str | None = None
    openai_base_url: str = OPENAI_BASE_URL
    openrouter_api_key: str | None = None
    openrouter_base_url: str = OPENROUTER_BASE_URL
    local_base_url: str | None = None
    local_api_key: str | None = None
    provider: Provider | None = None
    models: Mapping[str, str] | None = None
    """Alias -> model; ``None`` means :data:`ALIASES`' defaults."""
    timeout: float = 120.0
    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 20.0
    structured: Structured = "json_schema"

    def __repr__(self) -> str:
        return (
            f"LLMSettings(provider={self.provider!r}, local_base_url={self.local_base_url!r}, "
            f"openai={'set' if self.openai_api_key else 'unset'}, "
            f"openrouter={'set' if self.openrouter_api_key else 'unset'})"
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "LLMSettings":
        """Read the settings from ``environ`` (default: the process environment).

        Empty variables count as unset.

        Raises:
            ProviderNotConfiguredError: A variable holds a value that cannot be used (a timeout
                that is not a number, an unknown provider...); the message names it.
        """
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            former = FORMER_NAMES.get(name)
            if value or former is None:
                return value or None
            value = env.get(former, "").strip()
            if value and former not in _warned:
                _warned.add(former)
                _log.warning("%s is deprecated: set %s instead (read for now)", former, name)
            return value or None

        def read_as(name: str) -> str:
            former = FORMER_NAMES.get(name)
            unset = not env.get(name, "").strip()
            return former if former and unset and env.get(former, "").strip() else name

        models = {alias: get(var) or default for alias, (var, default) in ALIASES.items()}
        return cls(
            openai_api_key=get("OPENAI_API_KEY"),
            openai_base_url=get("OPENAI_BASE_URL") or OPENAI_BASE_URL,
            openrouter_api_key=get("OPENROUTER_API_KEY"),
            openrouter_base_url=get("OPENROUTER_BASE_URL") or OPENROUTER_BASE_URL,
            local_base_url=get("THOUGHTLEDGER_LLM_BASE_URL"),
            local_api_key=get("THOUGHTLEDGER_LLM_API_KEY"),
            provider=_choice(get, "THOUGHTLEDGER_LLM_PROVIDER", get_args(Provider)),
            models=models,
            timeout=_number(get, TIMEOUT_ENV, 120.0, positive=True, shown=read_as(TIMEOUT_ENV)),
            max_retries=int(
                _number(get, MAX_RETRIES_ENV, 3, whole=True, shown=read_as(MAX_RETRIES_ENV))
            ),
            backoff=_number(get, "THOUGHTLEDGER_LLM_BACKOFF_SECS", 0.5),
            structured=_choice(get, "THOUGHTLEDGER_LLM_STRUCTURED", get_args(Structured))
            or "json_schema",
        )

    def model_for(self, requested: str | None) -> str:
        """Resolve an alias (``normal``, ``LUX_MODEL_MINI``...) to a model name; others pass."""
        models = self.models if self.models is not None else {a: d for a, (_, d) in ALIASES.items()}
        name = (requested or "").strip() or DEFAULT_ALIAS
        alias = name.lower()
        for key, (variable, _default) in ALIASES.items():
            if name in (variable, FORMER_NAMES[variable]):
                alias = key
        return models.get(alias, name)

    def resolve(self, requested: str | None) -> Endpoint:
        """Return the endpoint for a model (``None``: the MCP API reference's ``LUX_MODEL_NORMAL``).

        Raises:
            ProviderNotConfiguredError: The provider the model needs has no key: the message
                starts with the MCP API reference's "OpenAI API key not configured" or "OpenRouter
                API key not configured" and says which variable to set.
        """
        model = self.model_for(requested)
        provider = self.provider or (
            "local" if self.local_base_url else "openrouter" if "/" in model else "openai"
        )
        if provider == "local":
            if not self.local_base_url:
                raise ProviderNotConfiguredError(
                    "LLM server not configured: set THOUGHTLEDGER_LLM_BASE_URL to a compatible "
                    "server's API root (for example http://127.0.0.1:11434/v1 for Ollama)"
                )
            key = self.local_api_key or LOCAL_PLACEHOLDER_KEY
            return Endpoint("local", self.local_base_url, key, model, {})
        if provider == "openrouter":
            if not self.openrouter_api_key:
                raise ProviderNotConfiguredError(
                    f"{OPENROUTER_KEY_MISSING}: set OPENROUTER_API_KEY to use {model!r}"
                )
            headers = {"X-Title": "thoughtledger"}
            return Endpoint(
                "openrouter", self.openrouter_base_url, self.openrouter_api_key, model, headers
            )
        if not self.openai_api_key:
            raise ProviderNotConfiguredError(
                f"{OPENAI_KEY_MISSING}: set OPENAI_API_KEY to use {model!r}, or "
                "THOUGHTLEDGER_LLM_BASE_URL for a compatible local server"
            )
        return Endpoint("openai", self.openai_base_url, self.openai_api_key, model, {})


def _choice(get: _Getter, name: str, allowed: tuple[_Option, ...]) -> _Option | None:
    value = get(name)
    if value is None:
        return None
    for option in allowed:
        if value.lower() == option:
            return option
    raise ProviderNotConfiguredError(f"{name}={value!r} is not one of: {', '.join(allowed)}")


def _number(
    get: _Getter,
    name: str,
    default: float,
    *,
    whole: bool = False,
    positive: bool = False,
    shown: str | None = None,
) -> float:
    value = get(name)
    name = shown or name  # the variable the value was read from, as the user set it
    if value is None:
        return default
    try:
        number = int(value) if whole else float(value)
    except ValueError:
        number = math.nan
    if math.isnan(number) or math.isinf(number) or number < 0 or (positive and number == 0):
        kind = "a whole number" if whole else "a number"
        raise ProviderNotConfiguredError(
            f"{name}={value!r} must be {kind} {'above' if positive else 'of at least'} 0"
        )
    return number


__all__ = [
    "ALIASES",
    "DEFAULT_ALIAS",
    "FORMER_NAMES",
    "MAX_RETRIES_ENV",
    "OPENAI_KEY_MISSING",
    "OPENROUTER_KEY_MISSING",
    "TIMEOUT_ENV",
    "Endpoint",
    "LLMSettings",
    "Provider",
    "Structured",
]
