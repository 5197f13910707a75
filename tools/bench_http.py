"""Memory of ``serve --http`` after many ``initialize`` calls: capped per principal, or not.

Each handshake-era ``initialize`` opens an HTTP session the server keeps until it is ended or
idles out (30 minutes). The same server is measured twice in one run: with a cap as high as the
number of calls (every session kept, as before the cap existed) and with the default cap.

Usage: tools/bench http-sessions
"""

import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import httpx2
from anyio.abc import ByteReceiveStream

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_scale import _rss_kib

from thoughtledger.adapters.mcp.serve_options import DEFAULT_MAX_HTTP_SESSIONS

Result = dict[str, Any]
ROOT = Path(__file__).resolve().parent.parent
_URL = re.compile(rb"url=(http://127\.0\.0\.1:\d+/mcp)")
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


async def _flood(cap: int, calls: int, folder: Path) -> tuple[int, Counter[int]]:
    """Start a server with ``--max-http-sessions cap``, send ``calls`` initializes; its RSS."""
    command = [sys.executable, "-m", "thoughtledger.adapters.cli", "serve", "--http", "--port", "0"]
    command += ["--db", f"sqlite:///{folder / f'cap{cap}.db'}", "--max-http-sessions", str(cap)]
    process = await anyio.open_process(command, cwd=ROOT, stderr=subprocess.PIPE)
    stderr = process.stderr
    assert stderr is not None
    log = b""
    while (match := _URL.search(log)) is None:
        log += await stderr.receive()
    url = match.group(1).decode()
    statuses: Counter[int] = Counter()
    limiter = anyio.Semaphore(16)
    headers = {"Accept": "application/json, text/event-stream"}
    async with anyio.create_task_group() as drain:
        # The server logs each session it opens and ends: a pipe nobody read would block it.
        drain.start_soon(_drain, stderr)
        try:
            async with httpx2.AsyncClient(timeout=60) as http, anyio.create_task_group() as group:

                async def one() -> None:
                    async with limiter:
                        response = await http.post(url, json=_INITIALIZE, headers=headers)
                        statuses[response.status_code] += 1

                for _ in range(calls):
                    group.start_soon(one)
            await anyio.sleep(1)  # let the server settle what the last responses left behind
            rss = _rss_kib(process.pid)
        finally:
            process.terminate()
            await process.wait()
    return rss, statuses


async def _drain(stream: ByteReceiveStream) -> None:
    async for _chunk in stream:
        pass


async def bench_http_sessions(calls: int = 6000) -> Result:
    """RSS after ``calls`` initializes: default cap against a cap that keeps every session."""
    with tempfile.TemporaryDirectory() as tmp:
        uncapped, kept = await _flood(calls, calls, Path(tmp))
        capped, refused = await _flood(DEFAULT_MAX_HTTP_SESSIONS, calls, Path(tmp))
    return {
        "name": f"memory: serve --http after {calls:,} initialize calls from one caller",
        "rss_mib_every_session_kept": round(uncapped / 1024, 1),
        "rss_mib_default_cap": round(capped / 1024, 1),
        "statuses_every_session_kept": dict(kept),
        "statuses_default_cap": dict(refused),
        "ratio": round(capped / uncapped, 3),
        "target": 0.5,
        "lower_is_better": True,
        "baseline": f"the same server with --max-http-sessions {calls} (every session kept)",
    }
