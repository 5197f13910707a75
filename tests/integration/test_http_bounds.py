"""Requests that never finish, against a real ``serve --http`` and ``ui`` on loopback sockets.

Connections that send half their headers, or headers and half a body, are answered ``408`` and
closed once their time is up, and a client with a whole request is answered meanwhile; with the
server's open files limited to 256 (``RLIMIT_NOFILE`` set in the child), 300 such connections do
not keep a valid client out.
"""

import json
import re
import resource
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from tests.support.processes import ROOT, WAIT, child_env, sqlite_in
from thoughtledger.adapters.auth.tokens import TokenFile, save_tokens
from thoughtledger.adapters.common.hardened import HEADER_TIMEOUT

URL = re.compile(rb"(http://127\.0\.0\.1:\d+)/")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "1"},
    },
}
FILES = 256


def limit_files(files: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))


@contextmanager
def running(argv: list[str], *, files: int | None = None) -> Iterator[str]:
    """Start ``thoughtledger ARGV`` (its open files limited to ``files``); yield its base URL."""
    process = subprocess.Popen(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger.adapters.cli", *argv],
        cwd=ROOT,
        env=child_env(DISABLE_THOUGHT_LOGGING="true"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=None if files is None else lambda: limit_files(files),
    )
    found: list[bytes] = []
    urls: list[str] = []
    ready = threading.Event()

    def drain() -> None:  # read the log to its end, so the server never blocks on the pipe
        assert process.stdout is not None
        for line in process.stdout:
            found.append(line)
            if (match := URL.search(line)) and not urls:
                urls.append(match.group(1).decode())
                ready.set()
        ready.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        assert ready.wait(WAIT)
        assert urls, b"".join(found)
        yield urls[0]
        assert process.poll() is None, b"".join(found)  # still serving
    finally:
        process.terminate()
        process.wait(WAIT)
        reader.join(WAIT)
        if process.stdout is not None:
            process.stdout.close()


def half_open(base: str, count: int, request: bytes) -> list[socket.socket]:
    """``count`` connections that send ``request`` (an unfinished one) and then nothing.

    ``HOST`` in ``request`` stands for the server's address, as a browser would send it.
    """
    host, port = base.removeprefix("http://").split(":")
    request = request.replace(b"HOST", f"{host}:{port}".encode())
    held = []
    for _ in range(count):
        connection = socket.create_connection((host, int(port)), timeout=WAIT)
        connection.sendall(request)
        held.append(connection)
    return held


def answer_then_close(connection: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by ``WAIT``)."""
    received = b""
    while chunk := connection.recv(4096):
        received += chunk
    return received


def post_initialize(base: str, token: str | None = None) -> int:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(  # noqa: S310  # a loopback URL the server printed
        base + "/mcp", data=json.dumps(INITIALIZE).encode(), headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=WAIT) as answer:  # noqa: S310
        status: int = answer.status
        return status


def get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=WAIT) as answer:  # noqa: S310  # loopback
        status: int = answer.status
        return status


HEADERS_CUT = b"POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Type: appl"
BODY_CUT = (
    b"POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
    b'{"jsonrpc": "2.0", "id": 1, '
)


def test_half_sent_headers_and_bodies_are_closed_in_time_while_whole_requests_are_answered(
    tmp_path: Path,
) -> None:
    serve = ["serve", "--db", sqlite_in(tmp_path), "--http", "--port", "0"]
    with (
        running([*serve, "--header-timeout", "1", "--body-timeout", "1"]) as base,
        ExitStack() as held,
    ):
        cut_headers = half_open(base, 100, HEADERS_CUT)
        cut_bodies = half_open(base, 100, BODY_CUT)
        for connection in cut_headers + cut_bodies:
            held.enter_context(connection)
        assert post_initialize(base) == 200
        answers = [answer_then_close(connection) for connection in cut_headers + cut_bodies]
        assert post_initialize(base) == 200
    assert all(answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n") for answer in answers)


def test_300_half_open_connections_under_256_files_do_not_keep_a_valid_token_out(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens.json"
    stored, token, _ = TokenFile().add("alice", "writer", now=datetime.now(UTC))
    save_tokens(tokens, stored)
    # Timeouts far beyond the test: only the connection limit can make room for the client.
    serve = ["serve", "--db", sqlite_in(tmp_path), "--http", "--port", "0", "--auth", str(tokens)]
    serve += ["--header-timeout", "600", "--body-timeout", "600"]
    with running(serve, files=FILES) as base, ExitStack() as held:
        for connection in half_open(base, 150, HEADERS_CUT) + half_open(base, 150, BODY_CUT):
            held.enter_context(connection)
        assert post_initialize(base, token) == 200
        assert post_initialize(base, token) == 200


def test_the_browser_view_is_bounded_the_same_way(tmp_path: Path) -> None:
    ui = ["ui", "--db", sqlite_in(tmp_path), "--port", "0"]
    # The view is read-only: a ledger must exist.
    subprocess.run(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger.adapters.cli", "demo", "--db", sqlite_in(tmp_path)],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        timeout=60,
        check=True,
    )
    cut = b"GET / HTTP/1.1\r\nHost: HOST\r\nAccept: text/h"
    with running(ui, files=FILES) as base, ExitStack() as held:
        waiting = half_open(base, 300, cut)
        for connection in waiting:
            held.enter_context(connection)
            connection.settimeout(HEADER_TIMEOUT + WAIT)
        assert get(base + "/") == 200
        # The newest half-sent request is still held (no room was needed since): its time runs out.
        assert answer_then_close(waiting[-1]).startswith(b"HTTP/1.1 408 Request Timeout\r\n")
