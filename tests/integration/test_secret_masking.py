"""A provider that echoes the API key back never gets it to the model or into the logs.

The scripted OpenAI-compatible server of :mod:`tests.support.llm_server` answers errors whose text
quotes the configured key in the shapes providers and proxies use. The tool error an MCP client
reads, and every log record (the SDK logs each tool error at INFO, the client each retry), must
hold no trace of it, while still saying what went wrong.
"""

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.support.llm_server import FakeLLM, Reply, error, fake_llm
from tests.support.mcp import Json, Mode, refused
from tests.support.raw_store import raw_store
from thoughtledger import GenerationError, Ledger, think_external
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.llm.config import LLMSettings
from thoughtledger.adapters.mcp import create_server
from thoughtledger.api import ThoughtPrompt, WrittenThought

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-proj-Zq7vXc91LmNoPq34RsTuVw56"
"""The configured key; it has the ``sk-`` shape, but is masked as the configured key first."""
GATEWAY_KEY = "corp-gateway-7f3e9a1b2c"
"""A key with no recognisable shape: only knowing it is configured can mask it."""
BEARER = "eyJhbGciOiJIUzI1NiJ9.payload.signature"

ECHOES = [
    error(401, f"Incorrect API key provided: {KEY}. You can find your API key in your dashboard."),
    error(401, f"proxy refused Authorization: Bearer {BEARER}"),
    error(400, f"invalid request: api_key={GATEWAY_KEY}&model=normal"),
    error(403, f"key {GATEWAY_KEY} may not use this model"),
]


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


def step(number: int = 1) -> Json:
    return {
        "thought": "How should rate limiting work across nodes?",
        "thought_number": number,
        "total_thoughts": 2,
        "next_thought_needed": True,
        "session_id": "masking",
    }


def assert_no_secret(text: str) -> None:
    for secret in (KEY, GATEWAY_KEY, BEARER, KEY[8:], GATEWAY_KEY[5:]):
        assert secret not in text


@pytest.mark.parametrize("echo", ECHOES, ids=["key", "bearer", "api_key field", "bare key"])
async def test_a_provider_error_reaches_the_model_and_the_log_without_the_key(
    ledger: Ledger,
    mode: Mode,
    llm: FakeLLM,
    echo: Reply,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    llm.queue(echo)
    key = GATEWAY_KEY if GATEWAY_KEY in str(echo.body) else KEY
    settings = LLMSettings(local_base_url=llm.base_url, local_api_key=key, max_retries=0)
    async with LLMWriter(settings) as writer:
        server = create_server(ledger, tools=["sequential_thinking_external"], writer=writer)
        async with Client(server, mode=mode) as client:
            message = await refused(client, "sequential_thinking_external", step())
    assert message.startswith(f"Failed to generate thought with LLM: HTTP {echo.status}: ")
    assert "***" in message
    assert_no_secret(message)
    assert "failed" in caplog.text  # the SDK's INFO line for the failed tool call was captured
    assert_no_secret(caplog.text)
    assert llm.headers[0]["authorization"] == f"Bearer {key}"  # the key itself was sent


async def test_retried_failures_are_logged_without_the_key(
    ledger: Ledger,
    llm: FakeLLM,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    llm.queue(*[error(503, f"upstream refused key {KEY}")] * 3)
    settings = LLMSettings(local_base_url=llm.base_url, local_api_key=KEY, max_retries=2, backoff=0)
    async with LLMWriter(settings) as writer:
        server = create_server(ledger, tools=["sequential_thinking_external"], writer=writer)
        async with Client(server, mode="legacy") as client:
            message = await refused(client, "sequential_thinking_external", step())
    # Unconfigured (no entry point ran), structlog prints its records to stdout.
    logged = caplog.text + capsys.readouterr().out
    assert "3 attempts failed" in message
    assert logged.count("llm_attempt_failed") == 2
    assert_no_secret(message + logged)


class EchoingWriter:
    """A writer of the caller's own whose failure quotes its credentials."""

    async def write(
        self, prompt: ThoughtPrompt, *, model: str | None, temperature: float | None
    ) -> WrittenThought:
        raise GenerationError(
            f"Failed to generate thought with LLM: denied for Authorization: Bearer {BEARER}",
            status=401,
            attempts=1,
        )


async def test_a_custom_writers_failure_is_masked_too(ledger: Ledger) -> None:
    arguments = {key: value for key, value in step().items() if key != "session_id"}
    with pytest.raises(GenerationError) as raised:
        await think_external(ledger, None, arguments, writer=EchoingWriter())
    assert str(raised.value) == (
        "Failed to generate thought with LLM: denied for Authorization: ***"
    )
    assert (raised.value.status, raised.value.attempts) == (401, 1)
    assert raised.value.__cause__ is None
    assert await raw_store(ledger).read_all() == []


async def test_serve_keeps_the_key_out_of_the_tool_error_and_its_stderr(
    tmp_path: Path, llm: FakeLLM
) -> None:
    llm.queue(ECHOES[0])
    stderr = tmp_path / "serve.err"
    command = (
        f"exec {sys.executable} -m thoughtledger.adapters.cli serve "
        f"--db sqlite:///{tmp_path / 'l.db'} --tools all 2> {stderr}"
    )
    server = StdioServerParameters(
        command="/bin/sh",
        args=["-c", command],
        cwd=ROOT,
        env={
            "THOUGHTLEDGER_LLM_BASE_URL": llm.base_url,
            "THOUGHTLEDGER_LLM_API_KEY": KEY,
            "THOUGHTLEDGER_LLM_MAX_RETRIES": "0",
        },
    )
    async with Client(server) as client:
        message = await refused(client, "sequential_thinking_external", step())
    log = stderr.read_text(encoding="utf-8")
    assert message.startswith("Failed to generate thought with LLM: HTTP 401: ")
    assert "sequential_thinking_external" in log  # the SDK's INFO line about the failed call
    assert_no_secret(message + log)
