"""One Ctrl-C stops any command at once: one line, exit 130, no traceback, no partial file.

Real child processes sent SIGINT at the moment that used to go wrong: ``serve`` on stdio with
stdin held open (its answers to a pipe or to a file), ``export`` in the middle of a large ledger,
``export --otlp`` to an endpoint that accepts the connection and never answers, and the command's
start-up while its modules load. Each must end well within :data:`BOUND` seconds.
"""

import asyncio
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import IO, Any

import pytest

from tests.support.cli import sqlite_url
from tests.support.processes import ROOT, child_env

BOUND = 5.0
"""Seconds a command may take to stop after Ctrl-C (it takes well under one when idle)."""
INTERRUPTED = "thoughtledger: error: interrupted\n"


def _start(argv: list[str], stdout: int | IO[bytes] = subprocess.PIPE) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603  # our own interpreter and module, no shell
        [sys.executable, "-m", "thoughtledger", *argv],
        cwd=ROOT,
        env=child_env(DISABLE_THOUGHT_LOGGING="true"),
        stdin=subprocess.PIPE,  # held open: stdin's end must not be what stops it
        stdout=stdout,
        stderr=subprocess.PIPE,
    )


def _interrupt(child: subprocess.Popen[bytes]) -> tuple[int, float, str]:
    """Send Ctrl-C; return the exit code, the seconds it took to exit and its stderr."""
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    try:
        code = child.wait(timeout=BOUND * 4)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        pytest.fail(f"still running {BOUND * 4} s after Ctrl-C")
    took = time.monotonic() - sent
    assert child.stderr is not None
    err = child.stderr.read().decode()
    if child.stdin is not None:
        child.stdin.close()
    if child.stdout is not None:
        child.stdout.close()
    child.stderr.close()
    return code, took, err


def _stderr_until(child: subprocess.Popen[bytes], marker: str) -> None:
    assert child.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = child.stderr.readline().decode()
        if marker in line:
            return
        assert line, f"the child ended before {marker!r}"
    pytest.fail(f"no {marker!r} within 60 s")


@pytest.mark.parametrize("answers_to", ["pipe", "file"])
def test_one_ctrl_c_stops_serve_on_stdio_while_stdin_stays_open(
    tmp_path: Path, answers_to: str
) -> None:
    # With stdout a file, stdin used to be read in a worker thread that held the process until
    # stdin closed (`sleep 7 | thoughtledger serve`).
    with (tmp_path / "answers").open("wb") as answers:
        stdout = subprocess.PIPE if answers_to == "pipe" else answers
        child = _start(["serve", "--db", sqlite_url(tmp_path / "l.db")], stdout=stdout)
        _stderr_until(child, "serving_stdio")
        code, took, err = _interrupt(child)
    assert (code, err) == (130, "thoughtledger: stopped (Ctrl-C)\n")
    assert took < BOUND


def _generator() -> Callable[[Path, int], Coroutine[Any, Any, None]]:
    """``generate_ledger`` of tools/bench_stats.py (tools/ holds scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(
        "thoughtledger_bench_stats", ROOT / "tools" / "bench_stats.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generate: Callable[[Path, int], Coroutine[Any, Any, None]] = module.generate_ledger
    return generate


def test_one_ctrl_c_stops_an_export_and_leaves_no_file(tmp_path: Path) -> None:
    ledger = tmp_path / "big.db"
    asyncio.run(_generator()(ledger, 60_000))  # a few seconds of export
    folder = tmp_path / "out"
    folder.mkdir()
    child = _start(["export", "--all", "-o", str(folder / "all.jsonl"), "--db", str(ledger)])
    deadline = time.monotonic() + 60
    # Interrupted once the export is under way: its temporary file is being written.
    while not any(f.stat().st_size > 0 for f in folder.iterdir() if f.exists()):
        assert child.poll() is None, "the export ended before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    code, took, err = _interrupt(child)
    assert (code, err) == (130, INTERRUPTED)
    assert took < BOUND
    assert list(folder.iterdir()) == []  # neither the file nor its temporary part


def test_one_ctrl_c_stops_an_otlp_export_to_an_endpoint_that_never_answers(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    demo = _start(["demo", "--db", url])
    assert demo.wait(timeout=60) == 0
    for stream in (demo.stdin, demo.stdout, demo.stderr):
        assert stream is not None
        stream.close()
    with socket.create_server(("127.0.0.1", 0)) as endpoint:
        port = endpoint.getsockname()[1]
        child = _start(["export", "--all", "--otlp", f"http://127.0.0.1:{port}", "--db", url])
        endpoint.settimeout(60)
        connection, _ = endpoint.accept()  # accepted, and never answered
        with connection:
            code, took, err = _interrupt(child)
    assert (code, err) == (130, INTERRUPTED)
    assert took < BOUND  # not the 10 s the post's timeout would wait


@pytest.mark.parametrize("after", [0.05, 0.2, 0.5])
def test_one_ctrl_c_during_start_up_is_one_line(tmp_path: Path, after: float) -> None:
    # Python's own start-up is not ours: the child says when it is done, then runs the entry
    # the `thoughtledger` script runs. Ctrl-C lands while the command's modules load.
    entry = (
        "import sys; sys.stderr.write('ready\\n'); sys.stderr.flush()\n"
        "from thoughtledger.__main__ import main\n"
        "sys.exit(main())"
    )
    child = subprocess.Popen(  # noqa: S603  # our own interpreter, a fixed script
        [sys.executable, "-c", entry, "sessions", "--db", sqlite_url(tmp_path / "l.db")],
        cwd=ROOT,
        env={**child_env(), "PYTHONDONTWRITEBYTECODE": "1"},  # a cold start, as slow as any
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _stderr_until(child, "ready")
    time.sleep(after)
    code, took, err = _interrupt(child)
    assert "Traceback" not in err
    # Interrupted, or (on a fast machine) already done: reading no ledger is refused first, and
    # a Ctrl-C that lands as Python exits ends it by the signal, with no traceback.
    finished = code in (1, -signal.SIGINT) and err.startswith("thoughtledger: error: no ledger at ")
    assert (code, err) == (130, INTERRUPTED) or finished, (code, err)
    assert took < BOUND
    assert not os.path.exists(tmp_path / "l.db")
