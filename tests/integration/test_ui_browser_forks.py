"""Forks in the browser view under Chromium: listed on the source, followed, compared."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import (
    append_thought,
    record_demo,
    screenshot,
    ui_server,
    watched_page,
)
from tests.support.cli import sqlite_url
from tests.support.processes import thoughtledger

if TYPE_CHECKING:
    from playwright.sync_api import Browser

MARKUP = "<img src=x onerror=alert(1)> the fork's own way"


def _fork(url: str, source: str, version: int) -> str:
    ran = thoughtledger(
        "fork", source, "--at", str(version), "--agent", "explorer", "--db", url, "--json"
    )
    assert ran.returncode == 0, ran.stderr
    fork_id: str = json.loads(ran.stdout)["sessionId"]
    return fork_id


@pytest.mark.slow
def test_a_fork_is_listed_on_its_source_and_compared_with_it_side_by_side(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    source = record_demo(url)
    fork = _fork(url, source, 4)  # the start, then thoughts 1-3 in common
    append_thought(url, fork, MARKUP, 4)
    with ui_server(url) as base, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/{source}")
        page.wait_for_selector(f'#forks tr[data-session="{fork}"]')
        row = page.locator(f'#forks tr[data-session="{fork}"]')
        cells = row.locator("td").all_text_contents()
        assert cells[:3] == [fork, "4", "explorer"]
        assert page.locator("#forks h2").inner_text() == "1 fork"
        screenshot(page, "session-forks")

        row.locator(f'a[href="/sessions/{fork}"]').click()
        page.wait_for_selector("#compare-link")
        assert page.url.endswith(f"/sessions/{fork}")
        assert (
            page.locator("#fork-of").inner_text().startswith(f"forked from {source} at version 4")
        )
        assert page.locator("#forks").count() == 0  # the fork has no forks of its own

        page.locator("#compare-link").click()
        page.wait_for_selector("#common")
        assert page.url.endswith(f"/sessions/{fork}/compare")
        assert page.locator("#common").inner_text() == (
            f"3 thoughts in common up to version 4 of {source}"
        )
        source_side, fork_side = page.locator(".source-side"), page.locator(".fork-side")
        assert source_side.locator(".count").inner_text().endswith("after the fork point")
        source_items = source_side.locator("ol.compared li")
        assert source_items.count() >= 1
        assert source_items.first.locator(".mono").inner_text().startswith("#")
        assert fork_side.locator(".count").inner_text() == "1 thought after the fork point"
        assert fork_side.locator("ol.compared li .text").all_text_contents() == [MARKUP]
        assert page.locator("img").count() == 0  # the thought is text, never markup
        screenshot(page, "fork-compare")

        # The address is shareable: opened afresh, it draws the same comparison.
        page.goto(f"{base}sessions/{fork}/compare")
        page.wait_for_selector("#common")
        assert fork_side.locator("ol.compared li .text").all_text_contents() == [MARKUP]
        assert watched.errors == []


@pytest.mark.slow
def test_compare_on_a_session_that_is_no_fork_says_so(browser: "Browser", tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    source = record_demo(url)
    with ui_server(url) as base, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/{source}/compare")
        page.wait_for_selector("p.error")
        assert "is no fork" in page.locator("p.error").inner_text()
        assert [error for error in watched.errors if "400" not in error] == []
