"""The sessions list in Chromium, kept current over the live socket: no reload needed.

A session another process starts appears on top of the list; the page is not reloaded.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import append_thought, chromium, record_demo, ui_server, watched_page
from tests.support.cli import sqlite_url
from tests.support.processes import WAIT

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def browser() -> Iterator["Browser"]:
    with chromium() as launched:
        yield launched


def test_a_new_session_appears_on_top_of_the_list_without_a_reload(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    first = record_demo(url)
    with ui_server(url) as base, watched_page(browser) as watched:
        page = watched.page
        page.goto(base)
        page.wait_for_selector(f'#sessions tr[data-session="{first}"]')
        page.wait_for_selector("#sessions.live", timeout=WAIT * 1000)  # the socket follows
        page.evaluate("window.stayed = true")  # gone if the page were loaded again
        second = record_demo(url)
        row = page.wait_for_selector(
            f'#sessions tbody tr[data-session="{second}"]', timeout=WAIT * 1000
        )
        assert row is not None
        rows = page.locator("#sessions tbody tr")
        assert rows.first.get_attribute("data-session") == second
        assert rows.count() == 2
        assert "fresh" in (rows.first.get_attribute("class") or "")
        # A listed session's row is drawn again as it grows.
        count = page.locator(f'tr[data-session="{first}"] td').nth(4)
        before = int(count.inner_text())
        append_thought(url, first, "one more", before + 1)
        from playwright.sync_api import expect

        expect(count).to_have_text(str(before + 1), timeout=WAIT * 1000)
        assert page.evaluate("window.stayed") is True
        assert watched.errors == []
