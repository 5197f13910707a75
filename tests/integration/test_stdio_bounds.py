"""stdio input that never ends, or is not text: a real ``thoughtledger serve`` holds its size.

A line is at most the size the SDK's HTTP transport takes as one body; a longer one is answered
once, dropped as it arrives, and the server goes on. Invalid UTF-8 is refused, saying where, and
nothing is recorded. Both stdio transports (our pipe transport, and the SDK's writer with
``THOUGHTLEDGER_STDIO=sdk``) and stdin read from ``/dev/zero`` itself are driven.
"""

import json
import time
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

from tests.support.lines import INITIALIZED, LineClient, initialize
from tests.support.mcp import Json
from tests.support.processes import ROOT, WAIT, child_env, serve_command, sqlite_in
from thoughtledger import open_ledger
from thoughtledger.adapters.mcp.stdio.framing import MAX_LINE_BYTES

pytestmark = pytest.mark.anyio

TRANSPORTS = ["pipes", "sdk"]
HEADROOM_KB = 60 * 1024
"""How much a server may grow over its idle size while fed a line that never ends."""
MEGABYTE = b"\0" * (1 << 20)


def rss_kb(pid: int) -> int:
    """The process's resident size, from ``/proc``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def call(request_id: int, thought: str) -> bytes:
    arguments = {
        "thought": thought,
        "thoughtNumber": 1,
        "totalThoughts": 1,
        "nextThoughtNeeded": False,
    }
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "sequentialthinking", "arguments": arguments},
    }
    return json.dumps(message).encode()


async def started(db: str, transport: str) -> Process:
    return await anyio.open_process(
        serve_command(db), cwd=ROOT, env=child_env(THOUGHTLEDGER_STDIO=transport)
    )


async def recorded(db: str) -> list[str]:
    async with open_ledger(db, ttl=None) as ledger:
        sessions = await ledger.list_sessions()
    return [entry.thought for state in sessions for entry in state.thoughts]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_200_mb_line_is_answered_once_and_the_server_stays_small_and_serving(
    tmp_path: Path, transport: str
) -> None:
    db = sqlite_in(tmp_path)
    process = await started(db, transport)
    client = LineClient(process, wait=WAIT)
    assert process.stdin is not None
    peak = idle = 0
    try:
        await client.handshake()
        idle = rss_kb(process.pid)
        for _ in range(200):
            await process.stdin.send(MEGABYTE)
            peak = max(peak, rss_kb(process.pid))
        await process.stdin.send(b"\n" + call(1, "after the flood") + b"\n")
        too_long = await client.receive()
        answer = await client.receive()
        peak = max(peak, rss_kb(process.pid))
    finally:
        process.kill()
        with anyio.fail_after(WAIT):
            await process.wait()
    assert too_long["id"] is None
    assert too_long["error"]["code"] == -32700
    assert f"line 3 is over {MAX_LINE_BYTES} bytes" in too_long["error"]["message"]
    assert answer["id"] == 1
    assert answer["result"]["isError"] is False, answer
    assert peak - idle <= HEADROOM_KB, (idle, peak)
    assert await recorded(db) == ["after the flood"]


async def test_serve_reading_dev_zero_answers_once_and_does_not_grow(tmp_path: Path) -> None:
    # The idle size of a server on this ledger, for the same imports and the same open ledger.
    process = await started(sqlite_in(tmp_path), "pipes")
    try:
        await LineClient(process, wait=WAIT).handshake()
        idle = rss_kb(process.pid)
    finally:
        process.kill()
        await process.wait()

    # stdin is the device itself (neither a pipe nor a terminal): the worker-thread reader.
    with Path("/dev/zero").open("rb") as zeros:  # noqa: ASYNC230  # a device: opening never blocks
        process = await anyio.open_process(
            serve_command(sqlite_in(tmp_path)), stdin=zeros, cwd=ROOT, env=child_env()
        )
    assert process.stdout is not None
    peak = 0
    try:
        with anyio.fail_after(WAIT):
            first = await process.stdout.receive()  # the answer to the line that passed the limit
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            peak = max(peak, rss_kb(process.pid))
            await anyio.sleep(0.05)
        alive = process.returncode is None
    finally:
        process.kill()
        rest = b"".join([chunk async for chunk in process.stdout])
        await process.wait()
    assert alive
    [line] = (first + rest).splitlines()
    assert json.loads(line)["error"]["code"] == -32700
    assert peak - idle <= HEADROOM_KB, (idle, peak)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_invalid_utf8_is_refused_naming_its_byte_and_nothing_is_recorded(
    tmp_path: Path, transport: str
) -> None:
    db = sqlite_in(tmp_path)
    bad = call(1, "caf\x00 latte").replace(b"\\u0000", b"\xe9")  # Latin-1, not UTF-8
    position = bad.index(b"\xe9")
    lines = [json.dumps(initialize("utf8")).encode(), json.dumps(INITIALIZED).encode(), bad]
    lines.append(call(2, "café latte"))
    with anyio.fail_after(WAIT):
        done = await anyio.run_process(
            serve_command(db),
            input=b"".join(line + b"\n" for line in lines),
            cwd=ROOT,
            env=child_env(THOUGHTLEDGER_STDIO=transport),
            check=False,
        )
    assert done.returncode == 0, done.stderr
    by_id: dict[int, Json] = {}
    for line in done.stdout.splitlines():
        message = json.loads(line)
        by_id[message["id"]] = message
    assert set(by_id) == {0, 1, 2}
    refused = by_id[1]["error"]
    assert refused["code"] == -32700
    assert f"line 3 is not UTF-8: byte {position} (0xe9)" in refused["message"]
    assert by_id[2]["result"]["isError"] is False
    assert await recorded(db) == ["café latte"]  # the refused thought was never written
