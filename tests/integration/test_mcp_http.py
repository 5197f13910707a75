"""Streamable HTTP: ``--http --port 0`` in a subprocess, several clients at once, each isolated."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.support.mcp import Json, call, thought
from tests.support.processes import WAIT, serving_http

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def http_server(tmp_path: Path, *options: str) -> AsyncIterator[str]:
    """Start the server on an SQLite file in ``tmp_path``; yield its URL."""
    async with serving_http(f"sqlite:///{tmp_path / 'l.db'}", *options) as url:
        yield url


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
    # A 2026-07-28 client has no HTTP session: an unnamed call continues the caller's current
    # run (tests/integration/test_mcp_stateless.py), a named one the session it names.
    async with http_server(tmp_path, "--tools", "all") as url, Client(url) as client:
        first = await call(client, "sequentialthinking", thought(1))
        alone = await call(client, "sequentialthinking", thought(1))
        second = await call(client, "sequentialthinking", thought(2, sessionId=first["sessionId"]))
        read = await call(client, "thinking_history", {"sessionId": first["sessionId"]})
        unnamed = await call(client, "thinking_history", {})
        shared = await call(client, "sequential_thinking", _snake(1))
        shared = await call(client, "sequential_thinking", _snake(2))
    assert alone["sessionId"] != first["sessionId"]
    assert (second["sessionId"], second["thoughtHistoryLength"]) == (first["sessionId"], 2)
    assert read["thoughtHistoryLength"] == 2
    assert unnamed["sessionId"] == first["sessionId"]  # the current run: the last one written
    assert shared["thought_history_length"] == 2  # the MCP API reference's shared "default" session


def _snake(number: int) -> Json:
    return {
        "thought": f"step {number}",
        "thought_number": number,
        "total_thoughts": 2,
        "next_thought_needed": True,
    }
