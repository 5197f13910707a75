"""A real browser for the web app's tests: Debian's Chromium driven by Playwright.

Playwright's own browser download cannot run here, so the tests drive the system Chromium
(``tools/test`` installs it when it is missing and it runs as root). Without Chromium or
Playwright the tests are skipped with the reason, except in CI (``CI=true``), where they fail.
"""

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.processes import ROOT, WAIT, child_env, thoughtledger

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = Path(os.environ.get("THOUGHTLEDGER_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
SCREENSHOTS = ROOT / "build" / "screenshots"
"""Where the test run leaves pictures of the main pages (git-ignored)."""

_URL = re.compile(r"(http://127\.0\.0\.1:\d+/)")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests must run in CI: {reason}")
    pytest.skip(reason)


@contextmanager
def chromium() -> Iterator["Browser"]:
    """Launch headless Chromium (skip, or fail in CI, when it cannot be had)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (it is in the dev extra)")
    if not CHROMIUM.exists():
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium; tools/test does)")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Watched:
    """A page whose console errors and uncaught exceptions are collected."""

    def __init__(self, page: "Page") -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"pageerror: {error}"))

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"console {message.type}: {message.text}")


@contextmanager
def watched_page(browser: "Browser") -> Iterator[Watched]:
    """A fresh page (own context) that records console errors; closed afterwards."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield Watched(context.new_page())
    finally:
        context.close()


@contextmanager
def ui_server(db: str) -> Iterator[str]:
    """Run ``thoughtledger ui --db DB --port 0`` in a child process; yield its base URL."""
    with subprocess.Popen(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger.adapters.cli", "ui", "--db", db, "--port", "0"],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            found = _URL.search(line)
            if found is None:
                process.kill()
                _, err = process.communicate(timeout=WAIT)
                raise AssertionError(f"thoughtledger ui printed {line!r}; stderr: {err}")
            yield found.group(1)
        finally:
            process.terminate()
            process.communicate(timeout=WAIT)


def screenshot(page: "Page", name: str) -> Path:
    """Save a full-page picture of ``page`` as ``build/screenshots/NAME.png``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


_APPEND = """
import asyncio, sys
from thoughtledger import open_ledger

async def main() -> None:
    url, session_id, text, number = sys.argv[1:5]
    async with open_ledger(url, ttl=None) as ledger:
        await ledger.think(session_id, {"thought": text, "thought_number": int(number),
                                        "total_thoughts": int(number),
                                        "next_thought_needed": True})

asyncio.run(main())
"""


def append_thought(url: str, session_id: str, text: str, number: int) -> None:
    """Record one thought into ``session_id`` from another process (as an agent would).

    A child process also keeps asyncio out of the test's own thread, where Playwright's
    synchronous driver runs an event loop of its own.
    """
    subprocess.run(  # noqa: S603  # our interpreter, a fixed script
        [sys.executable, "-c", _APPEND, url, session_id, text, str(number)],
        cwd=ROOT,
        env=child_env(),
        check=True,
        timeout=WAIT,
    )


def record_demo(url: str) -> str:
    """Record the demo session into ``url`` from a child process; return its id."""
    ran = thoughtledger("demo", "--db", url, "--json")
    assert ran.returncode == 0, ran.stderr
    session_id: str = json.loads(ran.stdout)["sessionId"]
    return session_id


_STATES = """
import asyncio, json, sys
from thoughtledger import open_ledger

async def main() -> None:
    url, session_id = sys.argv[1:3]
    async with open_ledger(url, ttl=None, read_only=True) as ledger:
        latest = (await ledger.state(session_id)).version
        rows = []
        for version in range(1, latest + 1):
            state = await ledger.state(session_id, as_of_version=version)
            last = state.last
            rows.append({"thoughts": len(state.thoughts), "revisions": state.revisions,
                         "branches": len(state.branches), "status": state.status,
                         "total": None if last is None else last.total_thoughts,
                         "texts": [t.thought for t in state.thoughts]})
    print(json.dumps(rows))

asyncio.run(main())
"""


def states_by_version(url: str, session_id: str) -> list[dict[str, Any]]:
    """The ledger's own fold of ``session_id`` at every version (item 0: version 1)."""
    ran = subprocess.run(  # noqa: S603  # our interpreter, a fixed script
        [sys.executable, "-c", _STATES, url, session_id],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=WAIT,
    )
    rows: list[dict[str, Any]] = json.loads(ran.stdout)
    return rows


_CALLS = """
import asyncio, json, sys
from thoughtledger import open_ledger

async def main() -> None:
    url = sys.argv[1]
    sessions = json.load(sys.stdin)
    async with open_ledger(url, ttl=None) as ledger:
        for session_id, calls in sessions.items():
            for call in calls:
                await ledger.think(session_id, call)

asyncio.run(main())
"""


def record_calls(url: str, sessions: dict[str, list[dict[str, Any]]]) -> None:
    """Record each session's thinking calls (snake_case arguments) from a child process."""
    subprocess.run(  # noqa: S603  # our interpreter, a fixed script
        [sys.executable, "-c", _CALLS, url],
        input=json.dumps(sessions),
        cwd=ROOT,
        env=child_env(),
        text=True,
        check=True,
        timeout=WAIT,
    )
