"""``tools/list`` on the wire is byte for byte what clients have cached, on either stdio transport.

Hosts cache tool schemas and prompt caches key on them: a changed byte (a reordered key, a
reworded description, another serialisation path) costs every client a cache miss. The hashes
are of the whole response line to request id 2, right after the handshake.
"""

import hashlib
from pathlib import Path

import anyio
import pytest

from tests.support.lines import LineClient
from tests.support.processes import ROOT, WAIT, child_env, serve_command, sqlite_in

pytestmark = pytest.mark.anyio

EXPECTED = {
    "default": "80625824802c82ba8092143c5b1484d8a2c450c8d1ba3c9f95e452580b438143",
    "all": "e15de6105c2c4ab530888cece9412249b12819094bd72455fa44115aabe37e1f",
}
"""sha256 of the ``tools/list`` response line, by ``--tools`` profile."""
OPTIONS = {"default": (), "all": ("--tools", "all")}


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
