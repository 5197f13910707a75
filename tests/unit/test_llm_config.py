import logging

import pytest

from thoughtledger.adapters.llm import config
from thoughtledger.adapters.llm.config import (
    LOCAL_PLACEHOLDER_KEY,
    OPENAI_KEY_MISSING,
    OPENROUTER_KEY_MISSING,
    LLMSettings,
)
from thoughtledger.api import GenerationError, LedgerError, ProviderNotConfiguredError


def settings(**env: str) -> LLMSettings:
    return LLMSettings.from_env(env)


def test_no_model_means_002s_lux_model_normal() -> None:
    endpoint = settings(OPENAI_API_KEY="sk-a", THOUGHTLEDGER_LLM_MODEL_NORMAL="gpt-4o").resolve(
        None
    )
    assert (endpoint.provider, endpoint.model) == ("openai", "gpt-4o")


@pytest.mark.parametrize(
    ("requested", "variable"),
    [
        ("normal", "THOUGHTLEDGER_LLM_MODEL_NORMAL"),
        ("reasoning", "THOUGHTLEDGER_LLM_MODEL_REASONING"),
        ("mini", "THOUGHTLEDGER_LLM_MODEL_MINI"),
        ("opus", "THOUGHTLEDGER_LLM_MODEL_OPUS"),
        ("sonnet", "THOUGHTLEDGER_LLM_MODEL_SONNET"),
        ("grok", "THOUGHTLEDGER_LLM_MODEL_GROK"),
        ("LUX_MODEL_MINI", "THOUGHTLEDGER_LLM_MODEL_MINI"),
        ("THOUGHTLEDGER_LLM_MODEL_MINI", "THOUGHTLEDGER_LLM_MODEL_MINI"),
        ("Mini", "THOUGHTLEDGER_LLM_MODEL_MINI"),
    ],
)
def test_aliases_name_the_model_in_their_variable(requested: str, variable: str) -> None:
    chosen = settings(**{variable: "the-model"}).model_for(requested)
    assert chosen == "the-model"


def test_the_former_names_still_work_with_one_warning_and_the_new_ones_win(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config._warned.clear()  # once per process: this test is the first to see them
    with caplog.at_level(logging.WARNING, logger=config.__name__):
        former = settings(LUX_MODEL_MINI="old-mini", LUX_REQUEST_TIMEOUT_SECS="7")
        again = settings(LUX_MODEL_MINI="old-mini")
    assert (former.model_for("mini"), former.timeout, again.model_for("mini")) == (
        "old-mini",
        7.0,
        "old-mini",
    )
    assert [record.getMessage() for record in caplog.records] == [
        "LUX_MODEL_MINI is deprecated: set THOUGHTLEDGER_LLM_MODEL_MINI instead (read for now)",
        "LUX_REQUEST_TIMEOUT_SECS is deprecated: set THOUGHTLEDGER_LLM_TIMEOUT_SECS instead "
        "(read for now)",
    ]
    both = settings(LUX_MAX_RETRIES="9", THOUGHTLEDGER_LLM_MAX_RETRIES="1")
    assert both.max_retries == 1


def test_unset_aliases_fall_back_to_their_defaults() -> None:
    empty = settings()
    assert empty.model_for("mini") == "gpt-5-mini"
    assert empty.model_for("sonnet").startswith("anthropic/")


def test_any_other_name_is_a_model_name() -> None:
    assert settings().model_for("gpt-4.1-nano") == "gpt-4.1-nano"


def test_vendor_slash_model_names_go_to_openrouter() -> None:
    endpoint = settings(OPENROUTER_API_KEY="or-key").resolve("anthropic/claude-sonnet-4")
    assert endpoint.provider == "openrouter"
    assert endpoint.base_url == "https://openrouter.ai/api/v1"
    assert endpoint.api_key == "or-key"


def test_a_missing_openai_key_is_002s_error() -> None:
    with pytest.raises(ProviderNotConfiguredError) as caught:
        settings(OPENROUTER_API_KEY="or-key").resolve("gpt-4o")
    assert str(caught.value).startswith("OpenAI API key not configured")
    assert OPENAI_KEY_MISSING == "OpenAI API key not configured"
    assert "OPENAI_API_KEY" in str(caught.value)


def test_a_missing_openrouter_key_is_002s_error() -> None:
    with pytest.raises(ProviderNotConfiguredError) as caught:
        settings(OPENAI_API_KEY="sk-a").resolve("sonnet")
    assert str(caught.value).startswith("OpenRouter API key not configured")
    assert OPENROUTER_KEY_MISSING == "OpenRouter API key not configured"


def test_an_empty_key_is_no_key() -> None:
    with pytest.raises(ProviderNotConfiguredError):
        settings(OPENAI_API_KEY="  ").resolve("gpt-4o")


def test_configuration_errors_are_generation_errors_of_the_one_tree() -> None:
    assert issubclass(ProviderNotConfiguredError, GenerationError)
    assert issubclass(GenerationError, LedgerError)


def test_a_local_base_url_takes_every_model_and_needs_no_key() -> None:
    local = settings(THOUGHTLEDGER_LLM_BASE_URL="http://127.0.0.1:11434/v1")
    endpoint = local.resolve("anthropic/claude-sonnet-4")
    assert (endpoint.provider, endpoint.base_url) == ("local", "http://127.0.0.1:11434/v1")
    assert endpoint.api_key == LOCAL_PLACEHOLDER_KEY


def test_the_provider_can_be_forced() -> None:
    forced = settings(
        THOUGHTLEDGER_LLM_PROVIDER="OpenRouter",
        OPENROUTER_API_KEY="or-key",
        OPENROUTER_BASE_URL="http://127.0.0.1:1/v1",
    )
    endpoint = forced.resolve("llama3")
    assert (endpoint.provider, endpoint.base_url) == ("openrouter", "http://127.0.0.1:1/v1")


def test_forcing_local_without_a_base_url_says_what_to_set() -> None:
    with pytest.raises(ProviderNotConfiguredError, match="THOUGHTLEDGER_LLM_BASE_URL"):
        settings(THOUGHTLEDGER_LLM_PROVIDER="local").resolve(None)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("LUX_REQUEST_TIMEOUT_SECS", "soon"),
        ("LUX_REQUEST_TIMEOUT_SECS", "0"),
        ("LUX_MAX_RETRIES", "-1"),
        ("LUX_MAX_RETRIES", "2.5"),
        ("THOUGHTLEDGER_LLM_TIMEOUT_SECS", "soon"),
        ("THOUGHTLEDGER_LLM_MAX_RETRIES", "-1"),
        ("THOUGHTLEDGER_LLM_BACKOFF_SECS", "nan"),
        ("THOUGHTLEDGER_LLM_PROVIDER", "anthropic"),
        ("THOUGHTLEDGER_LLM_STRUCTURED", "yaml"),
    ],
)
def test_unusable_settings_are_named(variable: str, value: str) -> None:
    with pytest.raises(ProviderNotConfiguredError, match=variable):
        settings(**{variable: value})


def test_numbers_are_read() -> None:
    read = settings(
        LUX_REQUEST_TIMEOUT_SECS="2.5",
        LUX_MAX_RETRIES="0",
        THOUGHTLEDGER_LLM_STRUCTURED="off",
    )
    assert (read.timeout, read.max_retries, read.structured) == (2.5, 0, "off")


def test_keys_never_show_in_a_repr() -> None:
    configured = settings(OPENAI_API_KEY="sk-secret", OPENROUTER_API_KEY="or-secret")
    assert "secret" not in repr(configured)
    assert "secret" not in repr(configured.resolve("gpt-4o"))
