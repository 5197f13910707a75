"""``thoughtledger record`` in a real process, on SQLite and PostgreSQL: sessions from JSON Lines.

Each session's lines are recorded in one append or not at all: a bad line refuses its own
session (named by its line number and field) while the others are recorded; a line whose session
cannot be told refuses the whole file.
"""

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.backends import Backend, backend_for
from tests.support.processes import ROOT, WAIT, child_env
from thoughtledger import Ledger, open_ledger

pytestmark = pytest.mark.anyio

DURABLE = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=DURABLE)
def backend_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
async def durable(backend_name: str, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(backend_name, tmp_path) as chosen:
        yield chosen


def line(number: int, total: int = 3, **extra: Any) -> str:
    call = {
        "thought": f"thought {number}",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": number < total,
        **extra,
    }
    return json.dumps(call)


def record(url: str, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return thoughtledger("record", *argv, "--db", url, stdin=stdin)


def thoughtledger(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``thoughtledger ARGV`` in a process of its own."""
    return subprocess.run(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger", *argv],
        cwd=ROOT,
        env=child_env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def url_of(backend: Backend) -> str:
    assert backend.url is not None
    return backend.url


async def total_events(url: str) -> int:
    async with open_ledger(url, read_only=True) as ledger:
        return sum(head.version for head in await ledger.all_heads())


async def thoughts_of(ledger: Ledger, session_id: str) -> list[str]:
    return [entry.thought for entry in (await ledger.state(session_id)).thoughts]


async def test_runs_and_named_sessions_are_recorded_each_in_one_append(
    durable: Backend, tmp_path: Path
) -> None:
    url = url_of(durable)
    lines = [
        line(1),
        line(2),
        line(1, 2, sessionId="planner"),  # ends the run before it
        line(3),  # a new run: it does not follow the run's last line
        line(1, 2),  # a new run at thought 1
        line(2, 2, sessionId="planner"),  # joins planner's batch, wherever it is
        "",
        line(2, 2),  # a new run too: a named line came between
    ]
    source = tmp_path / "calls.jsonl"
    source.write_text("\n".join(lines) + "\n")
    done = record(url, str(source), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["thoughts"] == 7
    assert report["refused"] == []
    got = {tuple(item["lines"]): item for item in report["recorded"]}
    assert sorted(got) == [(1, 2), (3, 6), (4, 4), (5, 5), (8, 8)]
    assert got[(3, 6)]["recordedIn"] == "planner"
    async with open_ledger(url, read_only=True) as ledger:
        assert await thoughts_of(ledger, "planner") == ["thought 1", "thought 2"]
        for first, count in (((1, 2), 2), ((4, 4), 1), ((5, 5), 1), ((8, 8), 1)):
            session_id = got[first]["recordedIn"]
            events = await ledger.events(session_id)
            assert len(events) == count + 1
            # One transaction: every event of the session was stamped at one time.
            assert len({event.recorded_at for event in events}) == 1
            assert events[0].event.model_dump()["metadata"] == {
                "tool": "record",
                "transport": "cli",
            }
    # Plain output: one line per session, then the count.
    again = record(url, "-", stdin=line(3, 3, sessionId="planner") + "\n")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        "planner  1 thought (line 1)",
        "recorded 1 thought in 1 session from stdin",
    ]


async def test_a_bad_line_refuses_its_session_only_and_the_others_are_recorded(
    durable: Backend, tmp_path: Path
) -> None:
    url = url_of(durable)
    lines = [
        line(1, sessionId="kept"),
        line(1, sessionId="refused"),
        line(2, sessionId="refused", thoughtNumber=0),
        line(1),
        line(2, thought=""),
        line(2, sessionId="kept"),
        line(1),
        line(2),
    ]
    source = tmp_path / "calls.jsonl"
    source.write_text("\n".join(lines) + "\n")
    done = record(url, str(source))
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == (
        f"recorded 4 thoughts in 2 sessions from {source}; refused 2 sessions"
    )
    assert done.stderr.splitlines() == [
        "thoughtledger: error: session refused refused, nothing of it recorded: line 3: "
        "thoughtNumber: must be at least 1 (got 0)",
        "thoughtledger: error: the run from line 4 refused, nothing of it recorded: line 5: "
        "invalid thought: thought: must not be empty",
    ]
    async with open_ledger(url, read_only=True) as ledger:
        assert await thoughts_of(ledger, "kept") == ["thought 1", "thought 2"]
        assert await ledger.head("refused") is None
        heads = await ledger.all_heads()
    assert sorted(head.version for head in heads) == [3, 3]  # kept, and the run from line 7


async def test_a_line_whose_session_cannot_be_told_refuses_the_whole_file(
    durable: Backend, tmp_path: Path
) -> None:
    url = url_of(durable)
    first = record(url, "-", stdin=line(1, sessionId="before") + "\n")
    assert first.returncode == 0, first.stderr
    written = await total_events(url)
    source = tmp_path / "calls.jsonl"
    cases = {
        "not JSON": [line(1), "{thought"],
        "not a JSON object": [line(1), "[1, 2]"],
        "sessionId must be a string": [line(1), line(1, sessionId=7)],
        "sessionId: ": [line(1), line(1, sessionId="bad id\n")],
        "line is over": [line(1), line(1, thought="x" * (4 * 1024 * 1024 + 1))],
    }
    for said, lines in cases.items():
        source.write_text("\n".join(lines) + "\n")
        done = record(url, str(source))
        assert done.returncode == 2, (said, done.stderr)
        assert said in done.stderr
        assert done.stderr.startswith(f"thoughtledger: error: {source}:2: ")
        assert "nothing was recorded" in done.stderr
        assert done.stdout == ""
    missing = record(url, str(tmp_path / "nowhere.jsonl"))
    assert (missing.returncode, missing.stderr.strip()) == (
        2,
        f"thoughtledger: error: no such file: {tmp_path / 'nowhere.jsonl'}",
    )
    assert await total_events(url) == written


async def test_a_session_over_the_batch_bound_is_refused_with_its_lines(
    durable: Backend, tmp_path: Path
) -> None:
    url = url_of(durable)
    source = tmp_path / "long.jsonl"
    source.write_text("".join(line(n, 1001) + "\n" for n in range(1, 1002)) + line(1) + "\n")
    done = record(url, str(source))
    assert done.returncode == 1
    assert "lines 1-1001: 1001 thoughts for one session, over the 1000" in done.stderr
    assert done.stdout.splitlines()[-1].startswith("recorded 1 thought in 1 session")


def test_a_terminal_sees_a_progress_bar_and_a_pipe_does_not(tmp_path: Path) -> None:
    source = tmp_path / "calls.jsonl"
    source.write_text("".join(line(n, 300) + "\n" for n in range(1, 301)))
    url = f"sqlite:///{tmp_path / 'l.db'}"
    primary, secondary = os.openpty()
    process = subprocess.Popen(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger", "record", str(source), "--db", url],
        cwd=ROOT,
        env=child_env(TERM="xterm", COLUMNS="100"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=secondary,
    )
    os.close(secondary)
    screen = b""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal: all of it was read
            break
        if not chunk:
            break
        screen += chunk
    os.close(primary)
    out, _ = process.communicate(timeout=WAIT)
    assert process.returncode == 0
    assert b"Recording" in screen
    assert out.decode().splitlines()[-1] == f"recorded 300 thoughts in 1 session from {source}"
    piped = record(url, str(source))
    assert piped.returncode == 0
    assert piped.stderr == ""


async def test_a_session_named_by_a_unique_prefix_is_continued_as_every_command_reads_it(
    durable: Backend, tmp_path: Path
) -> None:
    url = url_of(durable)
    first = record(url, "-", stdin=line(1, 3, sessionId="incident-42") + "\n")
    assert first.returncode == 0, first.stderr
    also = record(url, "-", stdin=line(1, 3, sessionId="incident-7") + "\n")
    assert also.returncode == 0, also.stderr
    prefixed = "\n".join([line(2, 3, sessionId="incident-4"), line(3, 3, sessionId="incident-42")])
    done = record(url, "-", "--json", stdin=prefixed + "\n")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [item["recordedIn"] for item in report["recorded"]] == ["incident-42"]
    several = record(url, "-", stdin=line(4, 4, sessionId="incident") + "\n")
    assert several.returncode == 1
    assert "sessionId 'incident' matches several sessions" in several.stderr
    async with open_ledger(url, read_only=True) as ledger:
        assert await thoughts_of(ledger, "incident-42") == ["thought 1", "thought 2", "thought 3"]
        assert await ledger.head("incident-4") is None
        assert await ledger.head("incident") is None
    shown = thoughtledger("show", "incident-4", "--db", url, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["sessionId"] == "incident-42"


async def test_the_agent_and_client_come_from_the_options_or_a_lines_meta(
    durable: Backend, tmp_path: Path
) -> None:
    url = url_of(durable)
    meta = {"thoughtledger/agent": "reviewer", "thoughtledger/client": "claude-code 2.1"}
    lines = [line(1, 2), line(2, 2), line(1, 1, sessionId="named", _meta=meta)]
    source = tmp_path / "calls.jsonl"
    source.write_text("\n".join(lines) + "\n")
    done = record(url, str(source), "--agent", "planner", "--client", "replayer")
    assert done.returncode == 0, done.stderr
    listed = thoughtledger("sessions", "--db", url, "--json")
    assert listed.returncode == 0, listed.stderr
    seen = sorted((item["agent"], item["client"]) for item in json.loads(listed.stdout))
    assert seen == [("planner", "replayer"), ("reviewer", "claude-code 2.1")]
    # An export imported elsewhere keeps them.
    exported, elsewhere = tmp_path / "all.jsonl", f"sqlite:///{tmp_path / 'elsewhere.db'}"
    for argv in (
        ["export", "--all", "-o", str(exported), "--db", url],
        ["import", str(exported), "--db", elsewhere],
    ):
        moved = thoughtledger(*argv)
        assert moved.returncode == 0, moved.stderr
    async with open_ledger(elsewhere, read_only=True) as ledger:
        states = [await ledger.state(head.session_id) for head in await ledger.all_heads()]
    kept = sorted((state.metadata["agent"], state.metadata["client"]) for state in states)
    assert kept == seen
    conflicting = [
        line(1, 2, sessionId="torn", _meta={"thoughtledger/agent": "a"}),
        line(2, 2, sessionId="torn", _meta={"thoughtledger/agent": "b"}),
    ]
    source.write_text("\n".join(conflicting) + "\n")
    refused = record(url, str(source))
    assert refused.returncode == 1
    assert "line 2: _meta: thoughtledger/agent 'b' differs from 'a' on line 1" in refused.stderr
    bad = record(url, "-", "--agent", "bad\x1bname", stdin=line(1, 1) + "\n")
    assert bad.returncode == 2
    assert "an agent's name holds no control characters" in bad.stderr


def test_a_terminal_lists_the_first_sessions_and_counts_the_rest(tmp_path: Path) -> None:
    source = tmp_path / "calls.jsonl"
    source.write_text("".join(line(1, 1) + "\n" for _ in range(30)))
    url = f"sqlite:///{tmp_path / 'l.db'}"
    primary, secondary = os.openpty()
    process = subprocess.Popen(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger", "record", str(source), "--db", url],
        cwd=ROOT,
        env=child_env(TERM="xterm", COLUMNS="200"),
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=subprocess.DEVNULL,
    )
    os.close(secondary)
    screen = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal: all of it was read
            break
        if not chunk:
            break
        screen += chunk
    os.close(primary)
    assert process.wait(timeout=WAIT) == 0
    lines = screen.decode().splitlines()
    assert len(lines) == 22, lines
    assert lines[-2] == "… and 10 more sessions (--json lists every one)"
    assert lines[-1] == f"recorded 30 thoughts in 30 sessions from {source}"
