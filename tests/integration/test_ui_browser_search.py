"""The browser view's search in a real browser: a query's hits, marked, open the thought there."""

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import record_demo, screenshot, ui_server, watched_page
from tests.support.cli import sqlite_url

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The app on a ledger holding the demo session, and the session's id."""
    url = sqlite_url(tmp_path_factory.mktemp("ui-search") / "ledger.db")
    session_id = record_demo(url)
    with ui_server(url) as base:
        yield base, session_id


def test_a_search_shows_marked_hits_that_open_the_thought_at_its_version(
    browser: "Browser", served: tuple[str, str]
) -> None:
    base, session_id = served
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}search")
        page.fill("input[name=q]", '"read replica" -index')
        page.click("form.filters button[type=submit]")
        page.wait_for_selector("#search-results tr.hit")
        rows = page.locator("#search-results tr.hit")
        assert rows.count() == 1
        assert page.locator("#search-count").inner_text() == "1 hit in 1 session"
        assert page.locator("#search-results mark").all_text_contents() == ["read", "replica"]
        assert "q=%22read+replica%22+-index" in page.url
        screenshot(page, "search")
        page.locator("#search-results tr.hit a").click()
        page.wait_for_selector("#tree li.thought")
        assert page.url.endswith(f"/sessions/{session_id}?v=6")
        assert page.locator("#version-slider").input_value() == "6"
        assert watched.errors == []


def test_hits_are_counted_and_grouped_by_session(
    browser: "Browser", served: tuple[str, str]
) -> None:
    base, session_id = served
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}search?q=replica")
        page.wait_for_selector("#search-results tr.hit")
        hits = page.locator("#search-results tr.hit").count()
        assert hits >= 2
        assert page.locator("#search-count").inner_text() == f"{hits} hits in 1 session"
        heads = page.locator("#search-results tr.group-head").all_inner_texts()
        assert heads == [f"session {session_id} · {hits} hits"]
        assert page.locator("#search-results th").first.inner_text() == "thought"
        assert watched.errors == []


def test_a_query_with_nothing_to_find_says_so_without_breaking_the_page(
    browser: "Browser", served: tuple[str, str]
) -> None:
    base, _ = served
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}search?q=-only")
        page.wait_for_selector("p.error")
        assert "no word to find" in page.locator("p.error").inner_text()
        page.goto(f"{base}search?q=zzzz")
        page.wait_for_selector("text=No thought matches.")
        # OR is not a word here: the page says what to write instead, the form still there.
        page.goto(f"{base}search")
        page.fill("input[name=q]", "replica OR index")
        page.get_by_role("button", name="Search").click()
        page.wait_for_selector("#search-error")
        assert page.locator("#search-error").inner_text().startswith("OR is not supported")
        assert page.locator("input[name=q]").input_value() == "replica OR index"
        assert [error for error in watched.errors if "400" not in error] == []
