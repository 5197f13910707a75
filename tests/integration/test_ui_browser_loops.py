"""Loops in the browser view under Chromium: a repeat is marked on load and when it comes live."""

import time
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import append_thought, ui_server, watched_page
from tests.support.cli import sqlite_url

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.slow


def test_a_repeat_is_marked_on_the_page_and_when_it_arrives_live(
    browser: "Browser", tmp_path_factory: pytest.TempPathFactory
) -> None:
    url = sqlite_url(tmp_path_factory.mktemp("loops") / "ledger.db")
    append_thought(url, "looping", "Check the config file.", 1)
    append_thought(url, "looping", "Look elsewhere.", 2)
    append_thought(url, "looping", "check the CONFIG file", 3)
    with ui_server(url) as base, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/looping")
        page.wait_for_selector(".live-dot.on")
        marked = page.locator("li.thought.loop")
        assert marked.count() == 1
        assert marked.get_attribute("data-n") == "#3 ⟳ repeats #1 (v2):"
        # Another writer repeats the second thought: the live row comes marked.
        append_thought(url, "looping", "Look elsewhere!", 4)
        appended = time.monotonic()
        page.locator("li.thought.loop", has_text="Look elsewhere!").wait_for(timeout=5000)
        assert time.monotonic() - appended < 5.0
        assert page.locator("li.thought.loop").nth(1).get_attribute("data-n") == (
            "#4 ⟳ repeats #2 (v3):"
        )
        assert watched.errors == []
