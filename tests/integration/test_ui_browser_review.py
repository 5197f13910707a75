"""The review queue under Chromium: a filter, then thought by thought with the keyboard.

A reviewer asks for the thoughts holding a word, labels the first with a key, skips the
second, types a label for the third; the queue says where it stands, keeps its place across a
reload, and a queue of the thoughts "not labelled yet" holds only the one skipped. The labels
are annotations in the ledger. (A refused role: ``test_ui_browser_acts_auth.py``.)
"""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import record_demo, screenshot, watched_page
from tests.support.cli import sqlite_url
from tests.support.processes import thoughtledger
from tests.support.ui_app import ui_app

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.mark.slow
def test_a_reviewer_works_through_a_queue_with_the_keyboard_and_keeps_its_place(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    session_id = record_demo(url)
    with ui_app(url, None) as app, watched_page(browser) as watched:
        page = watched.page
        page.goto(app.base)
        page.get_by_role("link", name="Review").click()
        page.fill("#review-filter input[name=q]", "replica")
        page.get_by_role("button", name="Start the queue").click()
        page.wait_for_selector("#review-item .review-text")
        progress = page.locator("#review-progress")
        assert progress.inner_text() == "Thought 1 of 3 · 0 labelled · 0 skipped (you)"
        first = page.locator("#review-item .review-text").inner_text()
        screenshot(page, "review")

        page.keyboard.press("1")  # good
        page.wait_for_function(
            "() => document.querySelector('#review-progress').textContent.includes('1 labelled')"
        )
        assert progress.inner_text() == "Thought 2 of 3 · 1 labelled · 0 skipped (you)"
        assert page.locator("#review-result").inner_text().endswith(" good")
        skipped = page.locator("#review-item .review-text").inner_text()
        page.keyboard.press("s")
        assert progress.inner_text() == "Thought 3 of 3 · 1 labelled · 1 skipped (you)"
        page.fill("#review-label", "plan")
        page.press("#review-label", "Enter")
        page.wait_for_function(
            "() => document.querySelector('#review-progress').textContent.startsWith('Queue done')"
        )
        assert progress.inner_text() == "Queue done: 3 thoughts · 2 labelled · 1 skipped (you)"

        page.reload()  # the place is kept
        page.wait_for_selector("#review-progress")
        assert progress.inner_text().startswith("Queue done")

        page.goto(f"{app.base}review?q=replica&unlabelled=1")
        page.wait_for_selector("#review-item .review-text")
        assert page.locator("#review-progress").inner_text().startswith("Thought 1 of 1 ")
        assert page.locator("#review-item .review-text").inner_text() == skipped
        assert watched.errors == []

    ran = thoughtledger("show", session_id, "--db", url, "--json")
    labels = [a["label"] for a in json.loads(ran.stdout)["annotations"]]
    assert labels == ["good", "plan"]
    assert first != skipped


@pytest.mark.slow
def test_a_queue_without_a_filter_asks_for_one(browser: "Browser", tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    record_demo(url)
    with ui_app(url, None) as app, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{app.base}review?q=")
        page.wait_for_selector("#review-filter")
        page.goto(f"{app.base}review?loops=1")
        page.wait_for_selector("#review-item")
        assert page.locator("#review-item").inner_text() == "No thought in this queue."
        with app.client() as http:
            refused = http.get("api/review")
        assert refused.status_code == 400
        assert "a queue needs a filter" in refused.json()["error"]
        assert watched.errors == []
