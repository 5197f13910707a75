"""The browser view on a laptop's screen, under Chromium: what a person needs is on screen.

At 1280x800 and 1440x900 the sessions list (chain badge first) and a session's page (slider,
acts, inspector) fit the window's width, read from the elements' boxes as Chromium lays them
out; the list says how many sessions there are and sorts by a column on a click; the label
filter leaves only the thoughts with the label, their notes shown under them.
"""

from typing import TYPE_CHECKING

import pytest

from tests.support.browser import record_demo, screenshot
from tests.support.cli import sqlite_url
from tests.support.processes import thoughtledger
from tests.support.ui_app import ui_app

if TYPE_CHECKING:
    from playwright.sync_api import Browser, FloatRect, Page

SIZES = [(1280, 800), (1440, 900)]


def _right_edges(page: "Page", selector: str) -> list[float]:
    found: list[float] = page.locator(selector).evaluate_all(
        "nodes => nodes.map((n) => n.getBoundingClientRect().right)"
    )
    return found


def _box(page: "Page", selector: str) -> "FloatRect":
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    url = sqlite_url(tmp_path_factory.mktemp("layout") / "ledger.db")
    session_id = record_demo(url)
    for number, label in [(3, "wrong-premise"), (7, "good-call")]:
        made = thoughtledger(
            "annotate", session_id, str(number), "--label", label, "--note",
            f"why {label}", "--by", "rev", "--db", url,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
    ran = thoughtledger("demo", "--db", url, "--json")  # a second demo session: two rows
    assert ran.returncode == 0, ran.stderr
    return url, session_id


@pytest.mark.slow
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_sessions_list_fits_the_window_with_the_chain_first_a_total_and_sorting(
    browser: "Browser", ledger: tuple[str, str], width: int, height: int
) -> None:
    url, _ = ledger
    with ui_app(url, None) as app:
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            page = context.new_page()
            page.goto(app.base)
            page.wait_for_selector("#sessions tbody tr .badge.ok")
            assert page.locator("#sessions th").first.inner_text() == "chain"
            assert page.locator("#sessions-count").inner_text() == "2 of 2 sessions"
            # Every cell ends inside the window: nothing needed is off to the right.
            assert max(_right_edges(page, "#sessions th, #sessions td, form.filters")) <= width
            badge = _box(page, "#sessions tbody tr .badge")
            assert badge["x"] + badge["width"] <= width
            assert badge["y"] + badge["height"] <= height
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            # A click on a header sorts the rows; another click, the other way round.
            page.get_by_role("button", name="thoughts").click()
            counts = page.locator("#sessions tbody td.cell-thoughts").all_inner_texts()
            assert counts == sorted(counts, key=int, reverse=True)
            assert page.locator("th[aria-sort=descending]").inner_text().startswith("thoughts")
            page.get_by_role("button", name="thoughts").click()
            counts = page.locator("#sessions tbody td.cell-thoughts").all_inner_texts()
            assert counts == sorted(counts, key=int)
            screenshot(page, f"sessions-{width}")
        finally:
            context.close()


@pytest.mark.slow
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_session_page_fits_the_window_and_the_label_filter_leaves_only_its_thoughts(
    browser: "Browser", ledger: tuple[str, str], width: int, height: int
) -> None:
    url, session_id = ledger
    with ui_app(url, None) as app:
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            page = context.new_page()
            page.goto(f"{app.base}sessions/{session_id}")
            page.wait_for_selector("#acts")
            for needed in ("#version-slider", "#acts", "#annotate", "#fork", "#inspector"):
                box = _box(page, needed)
                assert box["x"] >= 0, needed
                assert box["x"] + box["width"] <= width, needed
            for needed in ("#version-slider", "#annotate", "#fork"):
                box = _box(page, needed)
                assert box["y"] + box["height"] <= height, needed  # no scrolling to act
            assert page.evaluate("document.documentElement.scrollWidth") <= width

            # The notes are under their thoughts, in words, not only on hover.
            notes = page.locator("#tree .annotation-note").all_inner_texts()
            assert notes == [
                "✎ wrong-premise by rev: why wrong-premise",
                "✎ good-call by rev: why good-call",
            ]
            page.select_option("#label-filter", "good-call")
            shown = page.locator("#tree li.thought:visible .thought-text").all_inner_texts()
            assert len(shown) == 1
            assert shown[0].startswith("Only the replica takes the job off")
            # No event rows, and no branch header left without a thought under it.
            assert page.locator("#tree li.event:visible").count() == 0
            assert page.locator("#tree li.branch:visible").count() == 0
            page.select_option("#label-filter", "wrong-premise")
            assert page.locator("#tree li.branch:visible").count() == 0
            assert page.locator("#tree li.thought:visible").count() == 1
            page.select_option("#label-filter", "")
            assert page.locator("#tree li.branch:visible").count() == 2
            assert page.locator("#tree li.thought:visible").count() == 9
            screenshot(page, f"session-{width}")
        finally:
            context.close()
