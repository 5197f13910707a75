"""The README, then the command line's page, walked top to bottom as a new user, in real processes.

A fresh ``HOME``, an empty folder, no ledger configured, and ``thoughtledger`` on the ``PATH``:
every command the README shows (its shell blocks, its ``$ thoughtledger`` examples and the
complete commands of its prose), then every one of ``docs/cli.md``, runs in the order a reader
meets it. Each is expected to succeed (and to print what the page shows, where it shows
output), or to fail as the page says. The servers (``serve --http``, ``ui``) are started, asked
one request, and stopped with Ctrl-C; only their port is changed, to a free one. The lines
that are not ``thoughtledger`` commands are each accounted for in :data:`NOT_RUN`.
"""

import os
import re
import shlex
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.docs import README, SHOWN_ID, SHOWN_PREFIX, page, pattern
from tests.support.processes import ROOT, WAIT
from tests.support.tools_run import tools_project, tools_run

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="XDG folders, a POSIX shell"),
    pytest.mark.slow,  # some fifty processes, two servers among them
]

CLI_PAGE = page("cli.md")
NOT_RUN = {
    "pip install .": "the install itself: this test runs on the installed checkout",
    "pip install '.[postgres]'": "the install itself, as above",
    "tools/test": "the whole suite, this test among it",
    "claude": "another program (Claude Code) registering the server",
    "tools/run ARGS...": "a placeholder: the commands it stands for are run below",
    "tools/run serve --http": "the server `thoughtledger serve --http` is, started below",
}
"""Lines of the pages' shell blocks that are not run, by how they begin, and why."""
FAILS = {
    "thoughtledger export": "name the sessions to export, or give --all",
    "thoughtledger annotate": "the following arguments are required: SESSION, THOUGHT",
    "thoughtledger search": "the following arguments are required: QUERY",
}
"""Commands the prose names bare (what they are for, not how to run them): one line, exit 2."""


@dataclass
class Step:
    """One command as a page shows it, and the output shown under it (if any)."""

    where: str
    line: str
    shown: list[str] = field(default_factory=list)


def steps(path: Path) -> Iterator[Step]:
    """The page's commands in reading order: shell blocks, ``$`` examples and prose commands."""
    text = path.read_text(encoding="utf-8")
    name = path.name
    fence: str | None = None
    current: Step | None = None
    pending = ""
    for number, line in enumerate(text.splitlines(), 1):
        if fence is None:
            if line.startswith("```"):
                fence, current = line[3:], None
                continue
            for span in re.findall(r"`((?:thoughtledger|tools/run) [^`]+)`", line):
                yield Step(f"{name}:{number}", span)
            continue
        if line == "```":
            if current is not None:
                while current.shown and not current.shown[-1].strip():
                    current.shown.pop()
                yield current
            fence, current = None, None
            continue
        if fence == "sh":
            whole = pending + line.split("  #", 1)[0].strip()
            if whole.endswith("\\"):
                pending = whole[:-1] + " "
                continue
            pending = ""
            if whole:
                yield Step(f"{name}:{number}", whole)
        elif fence == "":
            if line.startswith("$ thoughtledger "):
                if current is not None:
                    while current.shown and not current.shown[-1].strip():
                        current.shown.pop()
                    yield current
                command = line.removeprefix("$ ").split("   (exit", 1)[0]
                current = Step(f"{name}:{number}", command)
            elif current is not None:
                current.shown.append(line)


@dataclass
class User:
    """A new user: a home, a working folder, ``thoughtledger`` on the PATH."""

    home: Path
    work: Path
    bin: Path
    session_id: str | None = None

    @property
    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k in ("LANG", "SYSTEMROOT")}
        path = os.pathsep.join([str(self.bin), os.environ["PATH"]])
        return {**keep, "HOME": str(self.home), "PATH": path, "PYTHONPATH": str(ROOT)}

    def argv(self, line: str) -> list[str]:
        words = shlex.split(line)
        if self.session_id is not None:
            words = [
                self.session_id[:18] if word in (SHOWN_PREFIX, "SESSION") else word
                for word in words
            ]
        return words

    def run(self, line: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603  # the documented command, our own script
            self.argv(line),
            cwd=self.work,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    @contextmanager
    def serving(self, line: str) -> Iterator[int]:
        """Start the server a line shows, on a free port; yield the port; stop it by Ctrl-C."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        words = [w for w in self.argv(line) if w not in ("--port", "8765")]
        server = subprocess.Popen(  # noqa: S603  # the documented command, our own script
            [*words, "--port", str(port)],
            cwd=self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + WAIT
            while True:
                assert server.poll() is None, server.communicate()[1]
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"{line} never listened"
                    time.sleep(0.1)
            yield port
        finally:
            server.send_signal(signal.SIGINT)
            _, err = server.communicate(timeout=WAIT)
        # One Ctrl-C stops it, saying so (serve exits 130 as a signalled program; ui, a viewer, 0).
        assert server.returncode in (0, 130), err
        assert err.rstrip().endswith("thoughtledger: stopped (Ctrl-C)"), err


def status(url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None) -> int:
    # Loopback only: the servers this walk starts.
    request = urllib.request.Request(url, data=data, headers=headers or {})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as answer:  # noqa: S310  # loopback
            code: int = answer.status
            return code
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project's tools, as a new user runs them (see :mod:`tests.support.tools_run`)."""
    return tools_project(tmp_path)


@pytest.fixture
def user(tmp_path: Path) -> User:
    home, work, bin_dir = tmp_path / "home", tmp_path / "work", tmp_path / "bin"
    for folder in (home, work, bin_dir):
        folder.mkdir()
    script = bin_dir / "thoughtledger"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m thoughtledger "$@"\n')
    script.chmod(0o755)
    return User(home, work, bin_dir)


def test_a_new_user_walks_the_readme_and_the_command_line_page(user: User, project: Path) -> None:
    walked: list[str] = []
    every = [*steps(README), *steps(CLI_PAGE)]
    examples = {step.line for step in every if step.shown}
    for step in every:
        if not step.shown and step.line in examples:
            continue  # the prose names an example shown below it: run once, where shown
        walked.append(step.line)
        _take(user, project, step)
    # The walk met every kind of step: a failure here means a page lost what it showed.
    assert {"tools/run", "thoughtledger demo --db demo.db", "thoughtledger doctor"} <= set(walked)
    assert any(line.startswith("thoughtledger serve --http --auth") for line in walked)
    assert any(line.startswith("thoughtledger fork") for line in walked)


def _take(user: User, project: Path, step: Step) -> None:  # one case a kind of step
    line, where = step.line, step.where
    if any(line.startswith(prefix) for prefix in NOT_RUN):
        return
    if line == "tools/run":
        ran = tools_run(project, user.home, terminal=True)
        assert ran.returncode == 0, (where, ran.stderr)
        assert "Recorded a sample session in" in ran.stdout
        return
    if line.startswith("tools/run "):
        args = shlex.split(line)[1:]
        ran = tools_run(project, user.home, *args)  # serve: stdin closed, it stops
        assert ran.returncode == 0, (where, ran.stderr)
        if args[0] != "serve":  # what it reads is the demo's, and it says so
            assert "demo.db" in ran.stdout + ran.stderr, (where, ran.stdout)
        return
    if line in FAILS:
        ran = user.run(line)
        assert (ran.returncode, ran.stdout) == (2, ""), where
        assert ran.stderr.startswith("thoughtledger: error: ")
        assert FAILS[line] in ran.stderr
        assert ran.stderr.count("\n") == 1
        return
    if line == "thoughtledger record FILE":
        calls = user.work / "calls.jsonl"
        calls.write_text(_record_example())
        ran = user.run(f"thoughtledger record {calls}")
        assert ran.returncode == 0, (where, ran.stderr)
        assert ran.stdout.splitlines()[-1] == f"recorded 3 thoughts in 2 sessions from {calls}"
        return
    if line.startswith(("thoughtledger serve --http", "thoughtledger ui", "thoughtledger receive")):
        with user.serving(line) as port:
            if line.startswith("thoughtledger ui"):
                assert status(f"http://127.0.0.1:{port}/") == 200, where
            elif line.startswith("thoughtledger receive"):
                # An empty export: accepted, nothing in it (OTLP's partial success, 200).
                kinds = {"Content-Type": "application/x-protobuf"}
                answered = status(f"http://127.0.0.1:{port}/v1/traces", data=b"", headers=kinds)
                assert (answered == 401) == ("--auth" in line), (where, answered)
            else:
                ask = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
                kinds = {"Content-Type": "application/json", "Accept": "application/json"}
                answered = status(f"http://127.0.0.1:{port}/mcp", data=ask, headers=kinds)
                # With --auth, no token gets 401; without, the server answers.
                assert (answered == 401) == ("--auth" in line), (where, answered)
        return
    if line == "thoughtledger verify" and step.shown:
        # "On a ledger your agents have used for a while, after someone edited one stored
        # row by hand": one of the planner's sessions, recorded into the default ledger.
        _used_for_a_while(user)
    ran = user.run(line)
    documented_failure = any("(exit 1)" in shown or "error:" in shown for shown in step.shown)
    if documented_failure:
        assert ran.returncode == 1, (where, ran.stderr)
        assert "BROKEN session" in ran.stdout
        assert ran.stderr.startswith("thoughtledger: error: tampering detected: session ")
        return
    assert ran.returncode == 0, (where, line, ran.stderr)
    if line == "thoughtledger demo --db demo.db":
        found = re.search(r"^session (\S+) ·", ran.stdout, re.MULTILINE)
        assert found is not None
        user.session_id = found.group(1)
        for suggested in re.findall(r"^  (thoughtledger .*)$", ran.stdout, re.MULTILINE):
            again = user.run(suggested)  # what the demo says to try next works as printed
            assert again.returncode == 0, (suggested, again.stderr)
    if line == "thoughtledger stats --agent planner":
        labels = [shown.split("  ", 1)[0] for shown in step.shown]
        printed = [row.split("  ", 1)[0] for row in ran.stdout.splitlines()]
        assert set(labels) <= set(printed), (labels, printed)
        return
    if step.shown and user.session_id is not None and "demo.db" in line:
        shown = [text.replace(SHOWN_ID, user.session_id) for text in step.shown]
        assert pattern(shown, user.session_id).fullmatch(ran.stdout), (where, ran.stdout)


def _record_example() -> str:
    """The Record section's JSON Lines, as the page shows them."""
    block = CLI_PAGE.read_text(encoding="utf-8").split("## Record", 1)[1]
    return "".join(f"{line}\n" for line in block.splitlines() if line.startswith('{"thought"'))


def _used_for_a_while(user: User) -> None:
    calls = user.work / "planner.jsonl"
    calls.write_text(_record_example())
    ran = user.run(f"thoughtledger record {calls} --agent planner")
    assert ran.returncode == 0, ran.stderr
    ledger = user.home / ".local" / "share" / "thoughtledger" / "ledger.db"
    db = sqlite3.connect(ledger)
    try:
        db.execute(
            "UPDATE tl_events SET payload = replace(payload, 'DNS', 'BGP') "
            "WHERE payload LIKE '%It was DNS%'"
        )
        db.commit()
    finally:
        db.close()
