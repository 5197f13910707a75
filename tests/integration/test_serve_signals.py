"""Ctrl-C in a terminal: one stops ``serve`` (stdio or HTTP) and interactive ``replay`` at once.

Each command runs in a subprocess on a real pseudo-terminal (stdin, stdout and stderr), so the
terminal paths run as they do for a person: ``serve`` reads its stdin from the terminal, and
``replay`` waits for single key presses. One SIGINT is sent, as the terminal sends it on Ctrl-C;
the command must exit 130 within a bounded wait, with no traceback.
"""

import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.support.mcp import thought
from tests.support.processes import ROOT, WAIT, child_env
from thoughtledger.adapters.cli.serve import WAITING

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

INTERRUPTED = 130


class Terminal:
    """A subprocess whose stdin, stdout and stderr are one pseudo-terminal."""

    def __init__(self, command: list[str]) -> None:
        primary, secondary = os.openpty()
        self.process = subprocess.Popen(  # noqa: S603  # our interpreter, our module
            command,
            cwd=ROOT,
            env=child_env(DISABLE_THOUGHT_LOGGING="true", TERM="xterm", COLUMNS="100"),
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            start_new_session=True,  # its own session: the pty becomes its controlling terminal
        )
        os.close(secondary)
        self._primary = primary
        self.screen = ""

    def wait_for(self, pattern: str) -> re.Match[str]:
        """Read the screen until ``pattern`` shows (within :data:`WAIT` seconds)."""
        deadline = time.monotonic() + WAIT
        while (found := re.search(pattern, self.screen)) is None:
            assert self._read(deadline), f"{pattern!r} never showed; screen:\n{self.screen}"
        return found

    def type(self, text: str) -> None:
        os.write(self._primary, text.encode())

    def interrupt_once(self) -> int:
        """Send one SIGINT; return the exit code, read within :data:`WAIT` seconds."""
        self.process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + WAIT
        while self.process.poll() is None:
            if not self._read(deadline):
                break
        try:
            code = self.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {WAIT} s after one Ctrl-C; screen:\n{self.screen}")
        self._read(time.monotonic() + 1)  # what it wrote last
        return code

    def _read(self, deadline: float) -> bool:
        """Read what is there (waiting until ``deadline``); False once nothing more can come."""
        timeout = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([self._primary], [], [], min(timeout, 0.2))
        if not ready:
            return time.monotonic() < deadline and self.process.poll() is None
        try:
            chunk = os.read(self._primary, 1 << 16)
        except OSError:  # EIO: every process holding the terminal has closed it
            return False
        self.screen += chunk.decode("utf-8", "replace")
        return bool(chunk)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(WAIT)
        os.close(self._primary)


@contextmanager
def terminal(*command: str) -> Iterator[Terminal]:
    opened = Terminal(list(command))
    try:
        yield opened
    finally:
        opened.close()


def serve(db: Path, *options: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "thoughtledger.adapters.cli",
        "serve",
        "--db",
        f"sqlite:///{db}",
        *options,
    ]


def assert_stopped_by_one_ctrl_c(
    screen: Terminal, code: int, said: str = "thoughtledger: stopped (Ctrl-C)"
) -> None:
    """Stopped at once, with one line: a server says it stopped, a command was interrupted."""
    assert code == INTERRUPTED, screen.screen
    assert "Traceback" not in screen.screen
    assert "KeyboardInterrupt" not in screen.screen
    assert screen.screen.count(said) == 1
    assert screen.screen.count("thoughtledger: error") == ("error" in said)


def test_one_ctrl_c_stops_serve_on_a_terminal(tmp_path: Path) -> None:
    with terminal(*serve(tmp_path / "l.db")) as screen:
        # One line says what it waits for, before the log line that it serves.
        screen.wait_for(r"serving_stdio stdio=terminal")
        assert screen.screen.startswith(WAITING.replace("\n", "\r\n")), screen.screen
        # The terminal is read on the event loop: a typed request is served...
        screen.type('{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        screen.wait_for(r'"id":1,"result":\{\}')
        # ...and a wait for the next line ends at the first Ctrl-C.
        code = screen.interrupt_once()
    assert_stopped_by_one_ctrl_c(screen, code)


@pytest.mark.anyio
async def test_one_ctrl_c_stops_serve_over_http_with_a_client_connected(tmp_path: Path) -> None:
    with terminal(*serve(tmp_path / "l.db", "--http", "--port", "0")) as screen:
        url = screen.wait_for(r"url=(http://127\.0\.0\.1:\d+/mcp)").group(1)
        # A handshake-era client holds a stream open, which a graceful stop would wait for.
        async with Client(url, mode="legacy") as client:
            answer = await client.call_tool("sequentialthinking", thought(1))
            assert answer.is_error is False
            code = await anyio.to_thread.run_sync(screen.interrupt_once)
    assert_stopped_by_one_ctrl_c(screen, code)


def test_one_ctrl_c_stops_an_interactive_replay(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    demo = subprocess.run(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger.adapters.cli", "demo", "--db", str(db)],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        timeout=WAIT * 3,
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    sessions = subprocess.run(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger.adapters.cli", "sessions", "--db", str(db), "--json"],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    )
    session = re.search(r'"session_?[iI]d": "([^"]+)"', sessions.stdout)
    assert session is not None, sessions.stdout
    command = [
        sys.executable,
        "-m",
        "thoughtledger.adapters.cli",
        "replay",
        session.group(1),
        "--db",
        str(db),
    ]
    with terminal(*command) as screen:
        screen.wait_for(r"Enter/space: next")
        code = screen.interrupt_once()
    assert_stopped_by_one_ctrl_c(screen, code, "thoughtledger: error: interrupted")
