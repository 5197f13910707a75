"""Opening a ledger written before the search index (schema 8) indexes every thought already in
it, in batches, telling its progress: to the Python API's callback, and as a bar on a terminal
(nothing on a pipe) when a command opens the ledger in a real process."""

import os
import pty
import select
import subprocess
import sys
import time

import pytest

from tests.support.older_ledger import SESSION, schema_8_ledger
from tests.support.processes import ROOT, WAIT, child_env, serve_command
from thoughtledger import open_ledger

pytestmark = pytest.mark.anyio

DESCRIPTION = "Indexing thoughts for search"


async def found_all(url: str, thoughts: int) -> None:
    """Every thought is in the index: found by its own word, and all by the shared one."""
    async with open_ledger(url, read_only=True) as ledger:
        for number in (1, thoughts // 2, thoughts):
            page = await ledger.search(f"word{number}")
            assert [hit.thought_number for hit in page.results] == [number]
        every: list[int] = []
        cursor: str | None = None
        while True:
            page = await ledger.search("step", limit=100, cursor=cursor)
            every += [hit.thought_number for hit in page.results]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert sorted(every) == list(range(1, thoughts + 1))


async def test_opening_an_older_ledger_indexes_its_thoughts_and_reports_progress(
    ledger_url: str,
) -> None:
    thoughts = 4_500
    await schema_8_ledger(ledger_url, thoughts)
    reports: list[tuple[str, int, int]] = []

    async with open_ledger(ledger_url, progress=lambda *report: reports.append(report)):
        pass

    await found_all(ledger_url, thoughts)
    events = thoughts + 1
    # A ledger this old takes the later steps too; on SQLite step 18 goes through the log as well.
    indexing = [report for report in reports if report[0] == DESCRIPTION]
    assert {total for _, _, total in indexing} == {events}
    done = [count for _, count, _ in indexing]
    assert done[0] == 0
    assert done[-1] == events
    assert done == sorted(done)
    assert len(done) >= 4  # several batches, each reported


async def test_creating_a_ledger_or_opening_an_up_to_date_one_reports_nothing(
    ledger_url: str,
) -> None:
    reports: list[tuple[str, int, int]] = []
    for _ in range(2):  # created, then opened again
        async with open_ledger(ledger_url, progress=lambda *report: reports.append(report)):
            pass
    assert reports == []


def _annotate(url: str, *, terminal: bool) -> tuple[int, str]:
    """Run ``thoughtledger annotate`` on ``url`` (which upgrades it); return its exit code and
    what it wrote on stderr, a terminal (a pseudo-terminal) or a pipe."""
    argv = [sys.executable, "-m", "thoughtledger", "annotate", "--db", url, SESSION, "1"]
    env = child_env(TERM="xterm-256color", COLUMNS="100", LINES="30")
    env.pop("NO_COLOR", None)
    if not terminal:
        done = subprocess.run(  # noqa: S603  # our interpreter, our module
            [*argv, "--label", "seen"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=WAIT * 3,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        return done.returncode, done.stderr
    parent, child = pty.openpty()
    process = subprocess.Popen(  # noqa: S603  # our interpreter, our module
        [*argv, "--label", "seen"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=child,
    )
    os.close(child)
    shown = b""
    deadline = time.monotonic() + WAIT * 3
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([parent], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(parent, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
        code = process.wait(timeout=WAIT)
    finally:
        os.close(parent)
        if process.poll() is None:
            process.kill()
    return code, shown.decode("utf-8", "replace")


@pytest.mark.slow
@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
async def test_a_command_upgrading_an_older_ledger_shows_a_bar_on_a_terminal_only(
    ledger_url: str, terminal: bool
) -> None:
    thoughts = 3_000
    await schema_8_ledger(ledger_url, thoughts)

    code, stderr = _annotate(ledger_url, terminal=terminal)

    assert code == 0, stderr
    if terminal:
        assert DESCRIPTION in stderr
        assert "/3001" in stderr  # events gone through, of all of them
    else:
        assert stderr == ""
    await found_all(ledger_url, thoughts)


def _serve_once(url: str) -> subprocess.CompletedProcess[str]:
    """Run ``thoughtledger serve`` on ``url`` with stdin closed: it opens the ledger, then stops."""
    return subprocess.run(  # noqa: S603  # our interpreter, our module
        serve_command(url),
        cwd=ROOT,
        env=child_env(),
        input="",
        capture_output=True,
        text=True,
        timeout=WAIT * 3,
        check=False,
    )


@pytest.mark.slow
async def test_the_server_upgrading_an_older_ledger_logs_when_indexing_starts_and_ends(
    ledger_url: str,
) -> None:
    thoughts = 2_000
    await schema_8_ledger(ledger_url, thoughts)

    done = _serve_once(ledger_url)

    assert done.returncode == 0, done.stderr
    started = done.stderr.index("schema_upgrade_started")
    assert done.stderr.index("schema_upgrade_done") > started
    assert f"events={thoughts + 1}" in done.stderr
    await found_all(ledger_url, thoughts)
