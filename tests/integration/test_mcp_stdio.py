"""The server as MCP clients run it: a real subprocess on stdio, killed and restarted.

The first run is driven line by line, as a host writes to the pipe, so every byte on stdout is
checked to be a JSON-RPC message and bad lines can be sent. The restart is read back with the
SDK's own stdio client, over the read tool: nothing the first run acknowledged may be lost.
"""

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.lines import LineClient
from tests.support.mcp import Json, text_of
from tests.support.processes import ROOT, WAIT, child_env, serve_command, sqlite_in

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def line_server(
    db: str, stderr: Path, *options: str, **env: str
) -> AsyncIterator[LineClient]:
    with stderr.open("wb") as log:
        process = await anyio.open_process(
            serve_command(db, *options), cwd=ROOT, env=child_env(**env), stderr=log
        )
        try:
            yield LineClient(process, wait=WAIT)
        finally:
            if process.returncode is None:
                process.kill()
            with anyio.fail_after(WAIT):
                await process.wait()


def thought(number: int, total: int = 4, **extra: Any) -> Json:
    return {
        "thought": f"thought {number}",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": True,
        **extra,
    }


async def test_a_killed_server_loses_nothing_it_acknowledged(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    async with line_server(db, tmp_path / "first.err") as client:
        assert (await client.handshake())["result"]["serverInfo"]["name"] == "thoughtledger"
        answers = [
            await client.call_tool("sequentialthinking", arguments)
            for arguments in (
                thought(1),
                thought(2, isRevision=True, revisesThought=1),
                thought(3, branchFromThought=1, branchId="alt"),
                thought(4, totalThoughts="4", nextThoughtNeeded="false"),
            )
        ]
        refused = await client.call_tool("sequentialthinking", thought(0))
        client.process.kill()  # SIGKILL: no shutdown code runs
    assert all(answer["isError"] is False for answer in answers)
    assert refused["isError"] is True
    session_id = answers[0]["structuredContent"]["sessionId"]
    assert {a["structuredContent"]["sessionId"] for a in answers} == {session_id}
    assert answers[-1]["structuredContent"]["thoughtHistoryLength"] == 4

    restarted = StdioServerParameters(
        command=sys.executable, args=serve_command(db)[1:], cwd=ROOT, env=child_env()
    )
    async with Client(restarted) as sdk_client:
        read = await sdk_client.call_tool("thinking_history", {"sessionId": session_id})
        branches = await sdk_client.call_tool(
            "thinking_history", {"sessionId": session_id, "show": "branches"}
        )
        listing = await sdk_client.read_resource("thoughtledger://sessions")
    assert read.is_error is False, text_of(read)
    assert read.structured_content is not None
    history = read.structured_content["history"]
    assert [(t["thoughtNumber"], t["kind"], t["thought"]) for t in history] == [
        (1, "thought.recorded", "thought 1"),
        (2, "thought.revised", "thought 2"),
        (3, "branch.opened", "thought 3"),
        (4, "thought.recorded", "thought 4"),
    ]
    assert history[-1]["nextThoughtNeeded"] is False
    assert branches.structured_content is not None
    assert [b["branchId"] for b in branches.structured_content["branches"]] == ["alt"]
    assert session_id in str(listing.contents[0])


@pytest.mark.parametrize("transport", ["pipes", "sdk"])
async def test_bad_lines_get_json_rpc_errors_and_the_server_keeps_serving(
    tmp_path: Path, transport: str
) -> None:
    env = {"THOUGHTLEDGER_STDIO": transport}
    async with line_server(sqlite_in(tmp_path), tmp_path / "stderr", **env) as client:
        await client.send_line("{not json")
        parse_error = await client.receive()
        await client.send_line('{"jsonrpc": "2.0", "id": 7}')
        invalid_request = await client.receive()
        await client.send_line("")  # a blank line is no request: nothing to answer
        assert (await client.handshake())["result"]["serverInfo"]["name"] == "thoughtledger"
        unknown_method = await client.request("thoughts/flush")
        invalid_params = await client.request("tools/call", {"arguments": {}})
        answer = await client.call_tool("sequentialthinking", thought(1))
    assert parse_error == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }
    assert invalid_request["id"] == 7
    assert invalid_request["error"]["code"] == -32600
    assert unknown_method["error"]["code"] == -32601
    assert invalid_params["error"]["code"] == -32602
    assert answer["structuredContent"]["thoughtHistoryLength"] == 1
    assert f"stdio={transport}" in (tmp_path / "stderr").read_text(encoding="utf-8")


async def test_each_thought_is_rendered_on_stderr_unless_disabled(tmp_path: Path) -> None:
    for disabled, name in ((None, "shown.err"), ("TRUE", "hidden.err")):
        env = {"DISABLE_THOUGHT_LOGGING": disabled} if disabled else {}
        async with line_server(sqlite_in(tmp_path), tmp_path / name, **env) as client:
            assert (await client.handshake())["result"]["serverInfo"]["name"] == "thoughtledger"
            await client.call_tool("sequentialthinking", thought(1))
        rendered = (tmp_path / name).read_text(encoding="utf-8")
        assert "serving_stdio" in rendered
        assert ("💭 Thought 1/4" in rendered) is (disabled is None)
