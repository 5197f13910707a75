"""Streamable HTTP: ``--http --port 0`` in a subprocess, several clients at once, each isolated."""

import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import PIPE

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from mcp import Client

from tests.integration.test_mcp_stdio import ROOT, WAIT, child_env
from tests.integration.test_mcp_tools import Json, call, refused, thought

pytestmark = pytest.mark.anyio

URL = re.compile(r"url=(http://127\.0\.0\.1:\d+/mcp)")


@asynccontextmanager
async def http_server(tmp_path: Path, *options: str) -> AsyncIterator[str]:
    """Start the server on an SQLite file in ``tmp_path``; yield its URL."""
    async with serving_http(f"sqlite:///{tmp_path / 'l.db'}", *options) as url:
        yield url


@asynccontextmanager
async def serving_http(db: str, *options: str) -> AsyncIterator[str]:
    """Start the server on the ledger ``db`` on a free loopback port; yield its URL, read from
    its log on stderr. It must stop gracefully (exit 0) when terminated."""
    command = [sys.executable, "-m", "api.cli", "serve", "--db", db]
    process = await anyio.open_process(
        [*command, "--http", "--port", "0", *options],
        cwd=ROOT,
        env=child_env(DISABLE_THOUGHT_LOGGING="true"),
        stderr=PIPE,
    )
    found: list[str] = []
    ready = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_read_log, process, found, ready)
        try:
            with anyio.fail_after(WAIT):
                await ready.wait()
            assert found, "the server stopped before it logged its URL"
            yield found[0]
        finally:
            if process.returncode is None:
                process.terminate()
            with anyio.fail_after(WAIT):
                assert await process.wait() == 0  # a graceful stop: the ledger was closed


async def _read_log(process: Process, found: list[str], ready: anyio.Event) -> None:
    # Drain stderr to its end, so the server never blocks on a full pipe.
    assert process.stderr is not None
    buffered = ""
    async for chunk in TextReceiveStream(process.stderr):
        buffered += chunk
        match = URL.search(buffered)
        if match and not ready.is_set():
            found.append(match.group(1))
            ready.set()
    ready.set()


async def test_concurrent_http_clients_think_in_isolated_sessions(tmp_path: Path) -> None:
    async with http_server(tmp_path) as url:
        both_connected = anyio.Event()
        connected = 0
        answers: dict[str, list[Json]] = {"a": [], "b": []}

        async def agent(name: str) -> None:
            nonlocal connected
            async with Client(url, mode="legacy") as client:
                connected += 1
                if connected == 2:
                    both_connected.set()
                await both_connected.wait()  # neither thinks before both are connected
                for n in (1, 2, 3):
                    answers[name].append(await call(client, "sequentialthinking", thought(n)))
                read = await call(client, "thinking_history", {})
                assert [t["thought"] for t in read["history"]] == [
                    "thought 1",
                    "thought 2",
                    "thought 3",
                ]

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                group.start_soon(agent, "a")
                group.start_soon(agent, "b")
    a_ids = {answer["sessionId"] for answer in answers["a"]}
    b_ids = {answer["sessionId"] for answer in answers["b"]}
    assert len(a_ids) == 1
    assert len(b_ids) == 1
    assert a_ids != b_ids
    assert [answer["thoughtHistoryLength"] for answer in answers["a"]] == [1, 2, 3]
    assert [answer["thoughtHistoryLength"] for answer in answers["b"]] == [1, 2, 3]


async def test_without_a_connection_the_answers_session_id_is_the_handle(
    tmp_path: Path,
) -> None:
    # A 2026-07-28 client has no HTTP session: each call stands alone unless it names a session.
    async with http_server(tmp_path, "--tools", "all") as url, Client(url) as client:
        first = await call(client, "sequentialthinking", thought(1))
        alone = await call(client, "sequentialthinking", thought(1))
        second = await call(client, "sequentialthinking", thought(2, sessionId=first["sessionId"]))
        read = await call(client, "thinking_history", {"sessionId": first["sessionId"]})
        unnamed = await refused(client, "thinking_history", {})
        shared = await call(client, "sequential_thinking", _snake(1))
        shared = await call(client, "sequential_thinking", _snake(2))
    assert alone["sessionId"] != first["sessionId"]
    assert (second["sessionId"], second["thoughtHistoryLength"]) == (first["sessionId"], 2)
    assert read["thoughtHistoryLength"] == 2
    assert "pass sessionId" in unnamed
    assert shared["thought_history_length"] == 2  # the MCP API reference's shared "default" session


def _snake(number: int) -> Json:
    return {
        "thought": f"step {number}",
        "thought_number": number,
        "total_thoughts": 2,
        "next_thought_needed": True,
    }
