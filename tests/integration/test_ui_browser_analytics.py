"""Analytics worth opening, under Chromium: formatted figures, loops, labels, links to sessions.

The demo session, an annotated thought and a session that loops, on one day: the figures read
as a person writes them, the loops link to a review queue of the repeats, the one day's rates
are bars (a line needs two days), a day's bar opens the sessions of that day and an agent's the
agent's sessions, the labels have a chart, and per-agent and per-model tables stand below.
"""

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import append_thought, record_demo, screenshot, watched_page
from tests.support.cli import sqlite_url
from tests.support.processes import thoughtledger
from tests.support.ui_app import ui_app

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.mark.slow
def test_the_analytics_read_well_and_lead_to_the_sessions_behind_them(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    session_id = record_demo(url)
    made = thoughtledger("annotate", session_id, "3", "--label", "wrong-premise", "--db", url)
    assert made.returncode == 0, made.stderr
    for number, text in enumerate(
        ["Check the config file.", "Look elsewhere.", "check the CONFIG file"], 1
    ):
        append_thought(url, "looping", text, number)
    today = datetime.now(UTC).date().isoformat()
    with ui_app(url, None) as app, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{app.base}analytics")
        page.wait_for_selector("#figures")
        figures = dict(row.split("\t", 1) for row in page.locator("#figures tr").all_inner_texts())
        assert figures["sessions"] == "2"
        assert figures["completion rate"] == "50.0%"
        assert figures["estimate drift"].startswith("mean +")
        assert figures["loops"] == "1 of 2 sessions · 1 repeated thought review them"
        # One day: the rates are bars, not a line of one point.
        assert (
            page.locator("#chart-rates h3").inner_text() == f"Revision and branch rates on {today}"
        )
        assert page.locator("#chart-rates polyline").count() == 0
        assert page.locator("#chart-labels text").all_text_contents()[0] == "wrong-premise"
        agents = page.locator("#by-agent tr").all_inner_texts()
        assert "sre-assistant / thoughtledger demo\t1\t9\t100.0%\t11.1%\t100.0%\t9\t+3.00" in agents
        screenshot(page, "analytics")

        page.locator("#chart-days a.chart-link").first.click()
        page.wait_for_selector("#sessions tbody tr")
        assert f"since={today}T00%3A00Z" in page.url
        assert page.locator("#sessions tbody tr").count() == 2

        page.goto(f"{app.base}analytics")
        page.locator("#by-agent a", has_text="sre-assistant").click()
        page.wait_for_selector("#sessions tbody tr")
        assert page.locator("#sessions tbody tr").evaluate_all(
            "rows => rows.map((row) => row.dataset.session)"
        ) == [session_id]

        page.goto(f"{app.base}analytics")
        page.locator("#review-loops").click()
        page.wait_for_selector("#review-item .review-text")
        assert page.locator("#review-item .review-text").inner_text() == "check the CONFIG file"
        assert watched.errors == []
