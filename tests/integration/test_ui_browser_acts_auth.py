"""Acting from the browser view with ``--auth``, under Chromium: each role does what the access
door allows (a reader nothing, a writer its own sessions, an auditor annotates and redacts any and
forks none) and is told in the page, in the door's words, what it may not.

A module of its own: the sessions are recorded before Chromium starts, whose driver runs an
event loop in the test's thread.
"""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.browser import chromium, screenshot, watched_page
from tests.support.cli import sqlite_url
from tests.support.processes import thoughtledger
from tests.support.ui_app import record_owned, ui_app

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page


def _thought(page: "Page", start: str) -> "Locator":
    row = page.locator("#tree li.thought", has=page.locator(".thought-text", has_text=start))
    return row.first


def _open(page: "Page", base: str, session_id: str) -> None:
    page.goto(f"{base}sessions/{session_id}")
    page.wait_for_selector("#tree li.thought")
    page.wait_for_selector("#acts")


def _sign_in(page: "Page", base: str, token: str) -> None:
    page.goto(base)
    page.fill("#token", token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("#sessions")


def _shown(url: str, session_id: str) -> dict[str, Any]:
    """What ``thoughtledger show --json`` prints of the session (the ledger, not the page)."""
    ran = thoughtledger("show", session_id, "--db", url, "--json")
    assert ran.returncode == 0, ran.stderr
    shown: dict[str, Any] = json.loads(ran.stdout)
    return shown


def _unexpected(errors: list[str]) -> list[str]:
    # The sign-in page asks who is signed in (401: nobody yet) and a refused act answers 403:
    # the browser logs both; anything else is a fault of the page.
    return [error for error in errors if "401" not in error and "403" not in error]


@pytest.mark.slow
def test_with_auth_each_role_acts_as_the_door_allows_and_is_told_what_it_may_not(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    # Recorded before Chromium starts: its driver runs an event loop in this thread.
    ids = record_owned(url, {"rita-1": "rita", "alice-1": "alice"})
    with ui_app(url, tmp_path / "tokens.json") as app, chromium() as browser:
        tokens = {
            "rita": app.mint("rita", "reader"),
            "alice": app.mint("alice", "writer"),
            "audrey": app.mint("audrey", "auditor"),
            "newcomer": app.mint("newcomer", "writer"),
        }
        with watched_page(browser) as newcomer:
            # Sessions there are, none of hers: the list says why it is empty.
            _sign_in(newcomer.page, app.base, tokens["newcomer"])
            newcomer.page.wait_for_selector("text=No sessions of newcomer's yet")
            assert newcomer.page.locator("#main p.muted").last.inner_text() == (
                "No sessions of newcomer's yet: a writer sees the sessions it started "
                "(an auditor sees every one)."
            )
        with watched_page(browser) as reader:
            page = reader.page
            _sign_in(page, app.base, tokens["rita"])
            # Her list fits the window, the chain first; it holds her one session.
            page.wait_for_selector("#sessions tbody tr .badge.ok")
            assert page.locator("#sessions th").first.inner_text() == "chain"
            assert page.locator("#sessions-count").inner_text() == "1 of 1 session"
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            _open(page, app.base, ids["rita-1"])
            # Her timeline and graph draw her session; a bar picks a thought, as for anyone.
            page.locator("#tab-timeline").click()
            page.locator('#timeline rect[data-v="3"]').click()
            assert page.locator("#acts h2").inner_text() == "Thought #2 (version 3)"
            page.locator("#tab-graph").click()
            assert page.locator("#graph g.node").count() == 2
            page.locator("#tab-tree").click()
            _thought(page, "rita-1 thinks").click()
            page.fill("#annotate-label", "looks-fine")
            page.get_by_role("button", name="Annotate").click()
            page.wait_for_selector("#act-result.refused")
            assert page.locator("#act-result").inner_text() == (
                "Refused: 'rita' has the reader role: it may not annotate thoughts "
                "(ask for a writer token)"
            )
            page.locator("#fork").click()
            page.wait_for_function(
                "() => document.querySelector('#act-result').textContent.includes('fork')"
            )
            assert "'rita' has the reader role: it may not fork sessions" in (
                page.locator("#act-result").inner_text()
            )
            screenshot(page, "session-refused")
            # Her review queue holds her own thoughts only; labelling one is refused too.
            page.goto(f"{app.base}review?q=thinks")
            page.wait_for_selector("#review-item .review-text")
            assert page.locator("#review-item .review-text").inner_text() == "rita-1 thinks"
            assert page.locator("#review-progress").inner_text().startswith("Thought 1 of 1 ")
            assert page.locator("#review-progress").inner_text().endswith("(rita)")
            page.keyboard.press("1")
            page.wait_for_selector("#review-result.refused")
            assert "'rita' has the reader role: it may not annotate thoughts" in (
                page.locator("#review-result").inner_text()
            )
            assert page.locator("#review-progress").inner_text().startswith("Thought 1 of 1 ")
            assert _unexpected(reader.errors) == []

        with watched_page(browser) as writer:
            page = writer.page
            _sign_in(page, app.base, tokens["alice"])
            _open(page, app.base, ids["alice-1"])
            _thought(page, "alice-1 again").click()
            page.fill("#annotate-label", "checked")
            page.get_by_role("button", name="Annotate").click()
            page.wait_for_selector("#act-result.done")
            page.wait_for_selector("#tree .annotation-note")
            assert page.locator("#tree .annotation-note").inner_text() == "✎ checked by alice"
            page.locator("#fork").click()
            page.wait_for_url(lambda address: ids["alice-1"] not in address)
            page.wait_for_selector("#fork-of a")
            assert _unexpected(writer.errors) == []

        with watched_page(browser) as auditor:
            page = auditor.page
            _sign_in(page, app.base, tokens["audrey"])
            _open(page, app.base, ids["alice-1"])
            _thought(page, "alice-1 thinks").click()
            page.fill("#redact-reason", "personal data")
            page.get_by_role("button", name="Redact #1").click()
            page.wait_for_selector("#act-result.done")
            page.wait_for_selector("#tree .thought-text.redacted")
            page.locator("#fork").click()
            page.wait_for_selector("#act-result.refused")
            assert "'audrey' has the auditor role: it may not fork sessions" in (
                page.locator("#act-result").inner_text()
            )
            assert _unexpected(auditor.errors) == []
    # Nothing of rita's was written; alice's session holds alice's note and audrey's redaction.
    assert _shown(url, ids["rita-1"])["version"] == 3
    alices = _shown(url, ids["alice-1"])
    assert alices["version"] == 5
    assert [(a["label"], a["by"]) for a in alices["annotations"]] == [("checked", "alice")]
    assert alices["thoughts"][0]["thought"] == "[redacted]"
