"""``sequential_thinking_external`` streams the model's thought as MCP progress notifications.

Real ``thoughtledger serve --tools all`` child processes over stdio and over HTTP on loopback,
on SQLite and PostgreSQL, driven by the MCP SDK's own client in both protocol eras; the model is
the loopback OpenAI-compatible server of :mod:`tests.support.llm_server`, streaming its answer
as server-sent events with a pause between chunks.
"""

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from tests.support.llm_server import FakeLLM, fake_llm, streamed, structured
from tests.support.mcp import Json, Mode, text_of
from tests.support.processes import ROOT, WAIT, child_env, serve_command, serving_http
from thoughtledger import Ledger, open_ledger
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.llm.config import LLMSettings
from thoughtledger.adapters.mcp import create_server

pytestmark = pytest.mark.anyio

TOOL = "sequential_thinking_external"
PIECES = ["Counters must be ", "shared across nodes: ", 'a "token bucket" ', "in Redis — ", "🚦."]
THOUGHT = "".join(PIECES)


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    with fake_llm() as server:
        # The server's children read their model from the environment, as `serve` documents.
        monkeypatch.setenv("THOUGHTLEDGER_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("THOUGHTLEDGER_LLM_MAX_RETRIES", "0")
        yield server


def step(number: int, guidance: str, *, total: int = 2, **extra: object) -> Json:
    return {
        "thought": guidance,
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": number < total,
        "session_id": "streamed",
        **extra,
    }


@dataclass
class Progress:
    """What a call's progress callback saw, and when the answer came."""

    messages: list[str] = field(default_factory=list)
    counts: list[float] = field(default_factory=list)
    first: anyio.Event = field(default_factory=anyio.Event)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        assert total is None
        assert message is not None
        self.messages.append(message)
        self.counts.append(progress)
        self.first.set()


@asynccontextmanager
async def over_stdio(db: str, mode: Mode) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=serve_command(db, "--tools", "all")[1:],
        cwd=ROOT,
        env=child_env(DISABLE_THOUGHT_LOGGING="true"),
    )
    async with Client(server, mode=mode) as client:
        yield client


@asynccontextmanager
async def over_http(db: str, mode: Mode) -> AsyncIterator[Client]:
    async with serving_http(db, "--tools", "all") as url, Client(url, mode=mode) as client:
        yield client


async def streamed_call(client: Client, arguments: Json) -> tuple[Progress, Json, int]:
    """Call the tool with a progress callback: what arrived, the answer, the messages before it."""
    progress = Progress()
    result: CallToolResult = await client.call_tool(TOOL, arguments, progress_callback=progress)
    before_answer = len(progress.messages)
    assert result.is_error is False, text_of(result)
    assert result.structured_content is not None
    return progress, result.structured_content, before_answer


async def recorded(db: str) -> list[Any]:
    async with open_ledger(db) as ledger:
        if await ledger.head("streamed") is None:
            return []
        state = await ledger.state("streamed")
    return list(state.thoughts)


def check_streamed(progress: Progress, answer: Json, before_answer: int, llm: FakeLLM) -> None:
    assert before_answer == len(progress.messages) >= 2  # several notifications, all first
    assert "".join(progress.messages) == answer["thought_content"] == THOUGHT
    running = 0
    for message, count in zip(progress.messages, progress.counts, strict=True):
        running += len(message)
        assert count == running  # progress counts the characters sent so far
    assert llm.bodies[0]["stream"] is True
    assert llm.streams == {"finished": 1, "cut": 0}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_model_s_thought_arrives_as_progress_then_is_recorded_once(
    ledger_url: str, mode: Mode, llm: FakeLLM, transport: str
) -> None:
    llm.queue(streamed(PIECES, delay=0.05, confidence=0.7, hint="Size the bucket"))
    connect = over_stdio if transport == "stdio" else over_http
    async with connect(ledger_url, mode) as client:
        with anyio.fail_after(WAIT):
            progress, answer, before_answer = await streamed_call(
                client, step(1, "How do I rate-limit?")
            )
    check_streamed(progress, answer, before_answer, llm)
    assert (answer["confidence"], answer["reasoning_hint"]) == (0.7, "Size the bucket")
    thoughts = await recorded(ledger_url)
    assert [entry.thought for entry in thoughts] == [THOUGHT]
    assert thoughts[0].generation.completion_tokens == 7  # the usage chunk was read


async def test_without_a_progress_token_the_model_is_asked_as_before(
    ledger_url: str, mode: Mode, llm: FakeLLM
) -> None:
    llm.queue(structured(THOUGHT, 0.9, "Next"))
    async with over_stdio(ledger_url, mode) as client:
        with anyio.fail_after(WAIT):
            result = await client.call_tool(TOOL, step(1, "How do I rate-limit?"))
    assert result.structured_content is not None
    assert result.structured_content["thought_content"] == THOUGHT
    assert "stream" not in llm.bodies[0]
    assert [entry.thought for entry in await recorded(ledger_url)] == [THOUGHT]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_call_cancelled_mid_stream_records_nothing_and_the_server_goes_on(
    ledger_url: str, mode: Mode, llm: FakeLLM, transport: str
) -> None:
    slow = [f"piece {number} " for number in range(40)]
    llm.queue(streamed(slow, delay=0.1), streamed(PIECES, delay=0.01))
    connect = over_stdio if transport == "stdio" else over_http
    async with connect(ledger_url, mode) as client:
        with anyio.fail_after(WAIT):
            progress = Progress()
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await client.call_tool(TOOL, step(1, "Slowly"), progress_callback=progress)

                group.start_soon(call)
                await progress.first.wait()
                group.cancel_scope.cancel()
            await llm.cut()
            # The server stopped reading the model and still serves the next call.
            _, answer, _ = await streamed_call(client, step(1, "Again"))
    assert progress.messages
    assert len(progress.messages) < len(slow)
    assert llm.streams["cut"] == 1
    assert answer["thought_content"] == THOUGHT
    assert [entry.thought for entry in await recorded(ledger_url)] == [THOUGHT]


async def test_an_http_client_that_drops_mid_stream_leaves_no_thought(
    ledger_url: str, llm: FakeLLM
) -> None:
    slow = [f"piece {number} " for number in range(40)]
    llm.queue(streamed(slow, delay=0.1), streamed(PIECES, delay=0.01))
    async with serving_http(ledger_url, "--tools", "all") as url:
        with anyio.fail_after(WAIT):
            await drop_mid_stream(url)
            # The model's stream is closed, and the server answers the next client.
            await llm.cut()
            async with Client(url) as client:
                _, answer, _ = await streamed_call(client, step(1, "Again"))
    assert answer["thought_content"] == THOUGHT
    assert [entry.thought for entry in await recorded(ledger_url)] == [THOUGHT]


def modern_meta(token: str) -> Json:
    """A 2026-07-28 request's ``_meta``, asking for progress under ``token``."""
    return {
        "progressToken": token,
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "dropper", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


async def drop_mid_stream(url: str) -> None:
    """POST a 2026-07-28 tools/call with a progress token; hang up after the first progress."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": TOOL,
            "arguments": step(1, "Slowly"),
            "_meta": modern_meta("p1"),
        },
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": TOOL,
    }
    async with (
        httpx.AsyncClient(timeout=WAIT) as http,
        http.stream("POST", url, json=body, headers=headers) as response,
    ):
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if line.startswith("data:") and "notifications/progress" in line:
                assert json.loads(line[5:])["params"]["progressToken"] == "p1"
                return  # closing the response drops the connection mid-stream
    raise AssertionError("no progress arrived")


async def test_an_in_process_client_with_a_progress_callback_sees_the_stream_too(
    ledger: Ledger, mode: Mode, llm: FakeLLM
) -> None:
    llm.queue(streamed(PIECES), structured(THOUGHT))
    settings = LLMSettings(local_base_url=llm.base_url, max_retries=0)
    async with LLMWriter(settings) as writer:
        server = create_server(ledger, tools=[TOOL], writer=writer)
        async with Client(server, mode=mode) as client:
            with anyio.fail_after(WAIT):
                progress, answer, before_answer = await streamed_call(client, step(1, "P"))
                # Without a callback the same client is answered whole, the model asked as before.
                whole = await client.call_tool(TOOL, step(2, "Q"))
    check_streamed(progress, answer, before_answer, llm)
    assert whole.structured_content is not None
    assert whole.structured_content["thought_content"] == THOUGHT
    assert "stream" not in llm.bodies[1]


async def test_a_stdio_client_that_hangs_up_mid_stream_leaves_no_thought(
    ledger_url: str, llm: FakeLLM
) -> None:
    slow = [f"piece {number} " for number in range(40)]
    llm.queue(streamed(slow, delay=0.1))
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": TOOL, "arguments": step(1, "Slowly"), "_meta": modern_meta("p1")},
    }
    command = serve_command(ledger_url, "--tools", "all")
    env = child_env(DISABLE_THOUGHT_LOGGING="true")
    with anyio.fail_after(WAIT):
        exit_code = await anyio.to_thread.run_sync(hang_up_after_progress, command, env, request)
        await llm.cut()
    assert exit_code == 0
    assert await recorded(ledger_url) == []


def hang_up_after_progress(command: list[str], env: dict[str, str], request: Json) -> int:
    """Send ``request`` to a stdio server, read up to its first progress, then close both pipes.

    Blocking, as a client process that dies would leave them; returns the server's exit code.
    """
    server = subprocess.Popen(  # noqa: S603  # our interpreter, our module
        command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write((json.dumps(request) + "\n").encode())
    server.stdin.flush()
    while b"notifications/progress" not in (line := server.stdout.readline()):
        assert line, "the server answered no progress"
    server.stdout.close()  # the client stops reading the answers...
    server.stdin.close()  # ...and its input ends
    return server.wait(timeout=WAIT)
