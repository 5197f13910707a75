"""``tools/list`` on the wire is byte for byte what clients have cached, on either stdio transport.

Hosts cache tool schemas and prompt caches key on them: a changed byte (a reordered key, a
reworded description, another serialisation path) costs every client a cache miss. The hashes
are of the whole response line to request id 2, right after the handshake.
"""

import hashlib
import json
from pathlib import Path

import anyio
import pytest

from tests.support.lines import LineClient
from tests.support.mcp import OFFICIAL_TOOLS_LIST_BYTES, TOOLS_LIST_BUDGET, listed_bytes
from tests.support.processes import ROOT, WAIT, child_env, serve_command, sqlite_in

pytestmark = pytest.mark.anyio

EXPECTED = {
    "default": "8d6b79e960220229fd34271dd790690daf4f8ced5ddc8a2bfc491eef427a1392",
    "all": "c10e94a2b3a1cd1be25e8604daf61dbb68330c02a2e961198a8f1baad8308782",
}
"""sha256 of the ``tools/list`` response line, by ``--tools`` profile."""
OPTIONS = {"default": (), "all": ("--tools", "all")}

DEFAULT_MOST = 6_900
"""Most bytes the default ``tools/list`` may take: 1.5 times the official server's list when it
measured 4,622 bytes (it measures :data:`OFFICIAL_TOOLS_LIST_BYTES` in 2026.8.31)."""


async def _tools_list_line(db: str, options: tuple[str, ...], **env: str) -> bytes:
    process = await anyio.open_process(
        serve_command(db, *options), cwd=ROOT, env=child_env(**env), stderr=None
    )
    async with process:
        client = LineClient(process, wait=WAIT)
        await client.handshake()
        line = await client.request_line("tools/list")
        assert process.stdin is not None
        await process.stdin.aclose()
        with anyio.fail_after(WAIT):
            await process.wait()
    return line


@pytest.mark.parametrize("profile", list(EXPECTED))
@pytest.mark.parametrize("transport", ["pipes", "sdk"])
async def test_tools_list_bytes_are_unchanged(tmp_path: Path, profile: str, transport: str) -> None:
    env = {"THOUGHTLEDGER_STDIO": transport} if transport == "sdk" else {}
    line = await _tools_list_line(sqlite_in(tmp_path), OPTIONS[profile], **env)
    assert hashlib.sha256(line).hexdigest() == EXPECTED[profile], line[:200]


async def test_the_default_list_stays_within_its_budget(tmp_path: Path) -> None:
    # Every conversation pays the default list; thinking_history must still say how to page.
    line = await _tools_list_line(sqlite_in(tmp_path), OPTIONS["default"])
    result = json.loads(line)["result"]
    size = listed_bytes(result)
    assert size <= DEFAULT_MOST, size
    assert size <= TOOLS_LIST_BUDGET * OFFICIAL_TOOLS_LIST_BYTES
    history = next(tool for tool in result["tools"] if tool["name"] == "thinking_history")
    words = json.dumps(history["inputSchema"]["properties"])
    for paging in ("nextCursor", "more: true", "next page"):
        assert paging in words
    assert {"more", "nextCursor"} <= history["outputSchema"]["properties"].keys()
