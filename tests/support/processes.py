"""The server as MCP clients run it: a subprocess on stdio or on HTTP, with a clean environment."""

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import PIPE

import anyio
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

ROOT = Path(__file__).resolve().parents[2]
WAIT = 20  # seconds: bounds every exchange (start-up imports included) so a hang fails fast

HERMETIC = {
    "DISABLE_THOUGHT_LOGGING",
    "THOUGHTLEDGER_STDIO",
    "THOUGHTLEDGER_URL",
    "THOUGHTLEDGER_READ_URL",
}


def child_env(**extra: str) -> dict[str, str]:
    """This environment minus the variables that would steer the server, plus ``extra``."""
    env = {key: value for key, value in os.environ.items() if key not in HERMETIC}
    return {**env, **extra}


def thoughtledger(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the ``thoughtledger`` command in a child process with no input; text out, any exit.

    ``env`` is added to the child's environment (see :func:`child_env`).
    """
    return subprocess.run(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger.adapters.cli", *argv],
        cwd=ROOT,
        env=child_env(**env),
        input="",
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def python_output(script: str) -> str:
    """Run a fixed Python script in this interpreter, from the repository; return its stdout.

    What a fresh process imports is the usual question (start-up cost), so it must be a child.

    Raises:
        subprocess.CalledProcessError: The script failed (its stderr is on the error).
    """
    done = subprocess.run(  # noqa: S603  # our own interpreter, a fixed script
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def serve_command(db: str, *options: str) -> list[str]:
    return [sys.executable, "-m", "thoughtledger.adapters.cli", "serve", "--db", db, *options]


def sqlite_in(folder: Path) -> str:
    """The URL of the ledger file ``l.db`` in ``folder``."""
    return f"sqlite:///{folder / 'l.db'}"


URL = re.compile(r"url=(http://127\.0\.0\.1:\d+/mcp)")


@asynccontextmanager
async def serving_http(
    db: str, *options: str, log: list[str] | None = None, rest: list[str] | None = None
) -> AsyncIterator[str]:
    """Start the server on the ledger ``db`` on a free loopback port; yield its URL, read from
    its log on stderr (the log so far, up to the URL line, is appended to ``log``; the text it
    logs after that line, to ``rest``, as it comes). It must stop gracefully (exit 0) when
    terminated."""
    command = [sys.executable, "-m", "thoughtledger.adapters.cli", "serve", "--db", db]
    process = await anyio.open_process(
        [*command, "--http", "--port", "0", *options],
        cwd=ROOT,
        env=child_env(DISABLE_THOUGHT_LOGGING="true"),
        stderr=PIPE,
    )
    found: list[str] = []
    ready = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_read_log, process, found, ready, rest)
        try:
            with anyio.fail_after(WAIT):
                await ready.wait()
            assert found, "the server stopped before it logged its URL"
            if log is not None:
                log.extend(found[1:])
            yield found[0]
        finally:
            if process.returncode is None:
                process.terminate()
            with anyio.fail_after(WAIT):
                assert await process.wait() == 0  # a graceful stop: the ledger was closed


async def _read_log(
    process: Process, found: list[str], ready: anyio.Event, rest: list[str] | None = None
) -> None:
    # Drain stderr to its end, so the server never blocks on a full pipe.
    assert process.stderr is not None
    buffered = ""
    async for chunk in TextReceiveStream(process.stderr):
        if ready.is_set():
            if rest is not None:
                rest.append(chunk)
            continue
        buffered += chunk
        match = URL.search(buffered)
        if match and not ready.is_set():
            found.append(match.group(1))
            found.extend(buffered[: match.end()].splitlines())
            if rest is not None:
                rest.append(buffered[match.end() :])
            ready.set()
    ready.set()
