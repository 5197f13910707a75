"""Acting from the browser view under Chromium: annotate, redact and fork where you look.

A person picks a thought in one page (the slider stays put), annotates it, redacts another and
forks the session at the slider's version; a second page open on the same session shows each
act as it lands. (With ``--auth``: ``test_ui_browser_acts_auth.py``.)
"""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.browser import record_demo, screenshot, watched_page
from tests.support.cli import sqlite_url
from tests.support.processes import WAIT, thoughtledger
from tests.support.ui_app import ui_app

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

MARKUP = "<img src=x onerror=alert(1)> not markup"


def _thought(page: "Page", start: str) -> "Locator":
    row = page.locator("#tree li.thought", has=page.locator(".thought-text", has_text=start))
    return row.first


def _open(page: "Page", base: str, session_id: str) -> None:
    page.goto(f"{base}sessions/{session_id}")
    page.wait_for_selector("#tree li.thought")
    page.wait_for_selector("#acts")


def _shown(url: str, session_id: str) -> dict[str, Any]:
    """What ``thoughtledger show --json`` prints of the session (the ledger, not the page)."""
    ran = thoughtledger("show", session_id, "--db", url, "--json")
    assert ran.returncode == 0, ran.stderr
    shown: dict[str, Any] = json.loads(ran.stdout)
    return shown


@pytest.mark.slow
def test_a_person_annotates_redacts_and_forks_from_the_page_and_another_page_sees_it_live(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    session_id = record_demo(url)
    with ui_app(url, None) as app, watched_page(browser) as acting, watched_page(browser) as other:
        page, watching = acting.page, other.page
        _open(page, app.base, session_id)
        _open(watching, app.base, session_id)
        assert page.locator("#version-slider").input_value() == "10"

        # A click picks the thought: the slider and what it shows stay as they were.
        _thought(page, "The nightly-report job").click()
        assert page.locator("#version-slider").input_value() == "10"
        assert page.locator("#tree li.thought:visible").count() == 9
        assert "Event at version 4 (picked" in page.locator("#inspector h2").inner_text()
        assert page.locator("#acts h2").inner_text() == "Thought #3 (version 4)"

        page.fill("#annotate-label", "wrong-premise")
        page.fill("#annotate-score", "-1")
        page.fill("#annotate-note", MARKUP)
        page.get_by_role("button", name="Annotate").click()
        page.wait_for_selector("#act-result.done")
        assert page.locator("#act-result").inner_text() == (
            "Annotated thought #3 as wrong-premise (version 11)"
        )
        # The other page draws it from the live feed: the note in words under its thought.
        note = _thought(watching, "The nightly-report job").locator(".annotation-note")
        note.wait_for(timeout=WAIT * 1000)
        assert note.inner_text().startswith("✎ wrong-premise (-1) by ")
        assert note.inner_text().endswith(f": {MARKUP}")
        assert watching.locator("img").count() == 0  # the note is text, never markup
        screenshot(page, "session-acted")

        _thought(page, "Checkout p95 latency").click()
        assert page.locator("#acts h2").inner_text() == "Thought #1 (version 2)"
        page.fill("#redact-reason", "a pasted customer name")
        page.get_by_role("button", name="Redact #1").click()
        page.wait_for_selector("#act-result.done")
        assert "Redacted #1 (v2)" in page.locator("#act-result").inner_text()
        watching.wait_for_function(
            "() => [...document.querySelectorAll('#tree .thought-text.redacted')]"
            ".some((t) => t.textContent === '[redacted]')"
        )
        assert watching.get_by_text("Checkout p95 latency").count() == 0

        # Fork at the slider's version: the page goes on in the fork's page.
        page.goto(f"{app.base}sessions/{session_id}?v=4")
        page.wait_for_selector("#acts")
        assert page.locator("#fork").inner_text() == "Fork at version 4"
        page.locator("#fork").click()
        page.wait_for_url(lambda address: session_id not in address)
        page.wait_for_selector("#fork-of a")
        assert (
            page.locator("#fork-of")
            .inner_text()
            .startswith(f"forked from {session_id} at version 4")
        )
        fork_id = page.url.rsplit("/", 1)[1]
        assert acting.errors == []
        assert other.errors == []

    shown = _shown(url, session_id)
    assert shown["version"] == 12  # the annotation (11) and the redaction (12)
    assert [(a["thoughtNumber"], a["label"], a["note"]) for a in shown["annotations"]] == [
        (3, "wrong-premise", MARKUP)
    ]
    assert shown["thoughts"][0]["thought"] == "[redacted]"
    ran = thoughtledger("verify", session_id, "--db", url)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    forked = _shown(url, fork_id)
    assert (forked["forkOf"]["sessionId"], forked["forkOf"]["version"]) == (session_id, 4)
    assert thoughtledger("verify", fork_id, "--db", url).returncode == 0
