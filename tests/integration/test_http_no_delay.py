"""Each answer of ``serve --http`` and ``ui`` leaves at once, without waiting on the client.

An answer's headers and body are written apart; without TCP_NODELAY on the accepted socket
(asyncio sets it only on sockets whose protocol number says TCP, and ``socket.create_server``'s
is 0) the body waited for the client's delayed acknowledgement: 40 ms a request, every
principal's every call. Measured against a bare asyncio server on loopback that answers with
one write, in the same test: a ratio, never an absolute time.
"""

import asyncio
import contextlib
import socket
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.support.auth import serving_with_auth
from tests.support.processes import sqlite_in
from tests.support.ui_app import record_owned, ui_app

pytestmark = pytest.mark.anyio

ROUNDS = 30
ANSWER = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n{}"


def _median_round_trip(port: int, request: bytes, end: bytes) -> float:
    """Median seconds of a request answered on one kept-alive connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as client:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        took = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            client.sendall(request)
            data = b""
            while not data.endswith(end):
                data += client.recv(65536)
            took.append(time.perf_counter() - started)
    return statistics.median(took)


@asynccontextmanager
async def _bare_server() -> AsyncIterator[int]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(ANSWER)
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


async def _baseline() -> float:
    async with _bare_server() as port:
        request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        return await asyncio.to_thread(_median_round_trip, port, request, b"{}")


async def test_serve_answers_without_waiting_for_the_clients_acknowledgement(
    tmp_path: Path,
) -> None:
    baseline = await _baseline()
    async with serving_with_auth(tmp_path) as server:
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        request = b"GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        ours = await asyncio.to_thread(_median_round_trip, port, request, b"}")
    print(f"serve {ours * 1000:.2f} ms, bare {baseline * 1000:.2f} ms")
    assert ours / baseline < 100  # 40 ms of delayed acknowledgement made it over a thousand


def test_ui_answers_without_waiting_for_the_clients_acknowledgement(tmp_path: Path) -> None:
    baseline = asyncio.run(_baseline())
    db = sqlite_in(tmp_path)
    record_owned(db, {"alice-1": "alice"})
    with ui_app(db, None) as app:
        request = b"GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        ours = _median_round_trip(app.port, request, b"}")
    print(f"ui {ours * 1000:.2f} ms, bare {baseline * 1000:.2f} ms")
    assert ours / baseline < 100
