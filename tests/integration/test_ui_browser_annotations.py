"""Annotations in the browser view under Chromium: a mark on the thought, from its version on."""

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import record_demo, screenshot, ui_server, watched_page
from tests.support.cli import sqlite_url
from tests.support.processes import thoughtledger

if TYPE_CHECKING:
    from playwright.sync_api import Browser

MARKUP = "<img src=x onerror=alert(1)> not markup"


@pytest.mark.slow
def test_an_annotation_marks_its_thought_from_its_version_on(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    session_id = record_demo(url)
    made = thoughtledger(
        "annotate", session_id, "3", "--label", "wrong-premise", "--score", "-1",
        "--note", MARKUP, "--by", "rev", "--db", url,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr  # version 11, on thought #3
    with ui_server(url) as base, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/{session_id}")
        page.wait_for_selector("#tree li.thought span.annotated")
        marks = page.locator("li.thought span.annotated:visible")
        assert marks.all_text_contents() == ["✎ wrong-premise"]
        thought = page.locator("li.thought", has=page.locator("span.annotated"))
        assert thought.locator(".thought-text").inner_text().startswith("The nightly-report job")
        assert marks.first.get_attribute("title") == f"wrong-premise (-1) by rev: {MARKUP}"
        events = page.locator("li.event:visible").all_text_contents()
        assert any(
            f"✎ thought #3 annotated wrong-premise (-1) by rev: {MARKUP}" in e for e in events
        )
        # The label filter shows only the thoughts annotated with the label chosen.
        page.select_option("#label-filter", "wrong-premise")
        visible = page.locator("li.thought:visible .thought-text").all_text_contents()
        assert len(visible) == 1
        assert visible[0].startswith("The nightly-report job")
        screenshot(page, "session-annotated")
        page.select_option("#label-filter", "")
        assert page.locator("li.thought:visible").count() == 9
        page.goto(f"{base}sessions/{session_id}?v=10")
        page.wait_for_selector("#tree li.thought")
        assert page.locator("li.thought span.annotated:visible").count() == 0
        assert page.locator("img").count() == 0  # the note is text, never markup
        assert watched.errors == []
