"""``thoughtledger ui`` and ``export --html`` in a real browser: what a person sees and can do.

Each test starts the app as its own process on a real SQLite ledger and drives headless
Chromium through Playwright; pictures of the main pages land in ``build/screenshots``.
"""

import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property.strategies import calls
from tests.support.browser import (
    append_thought,
    record_calls,
    record_demo,
    screenshot,
    states_by_version,
    ui_server,
    watched_page,
)
from tests.support.cli import sqlite_url
from tests.support.processes import thoughtledger
from thoughtledger.adapters.cli.demo import THOUGHTS as DEMO_THOUGHTS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog, Page

XSS = "</script><script>alert(1)</script><img src=x onerror=alert(2)> & <b>bold?</b>"


@pytest.fixture(scope="module")
def ledger_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return sqlite_url(tmp_path_factory.mktemp("ui") / "ledger.db")


@pytest.fixture(scope="module")
def demo_session(ledger_url: str) -> str:
    """The demo session, which the tests only read."""
    return record_demo(ledger_url)


@pytest.fixture(scope="module")
def base(ledger_url: str, demo_session: str) -> Iterator[str]:
    """One app for the module, on the module's ledger."""
    with ui_server(ledger_url) as url:
        yield url


def _visible_thoughts(page: "Page") -> list[str]:
    texts: list[str] = page.locator("li.thought:visible .thought-text").all_text_contents()
    return texts


def test_the_demo_session_at_version_5_shows_exactly_its_first_four_thoughts(
    browser: "Browser", base: str, demo_session: str
) -> None:
    session_id = demo_session
    first_four = [str(t["thought"]) for t in DEMO_THOUGHTS[:4]]
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/{session_id}?v=5")
        page.wait_for_selector("#tree li.thought")
        assert _visible_thoughts(page) == first_four
        assert page.locator("#version-slider").input_value() == "5"
        counts = page.locator("#counts").inner_text()
        assert counts.startswith("4 thoughts · 1 revision · 0 branches · estimate 6 · revision")
        assert "as of version 5 of 10" in counts
        # The revised thought says so; the inspector shows the event at version 5 and its link.
        assert page.locator("li.thought:visible .revised-by").all_text_contents() == [
            "(revised by #4)"
        ]
        inspector = page.locator("#inspector").inner_text()
        assert "thought.revised" in inspector
        assert "previous hash matches version 4" in inspector
        screenshot(page, "session")
        assert watched.errors == []


def test_keys_move_through_versions_and_the_url_names_the_version(
    browser: "Browser", base: str, demo_session: str
) -> None:
    session_id = demo_session
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/{session_id}?v=5")
        page.wait_for_selector("#tree li.thought")
        page.locator("#main").focus()
        page.keyboard.press("ArrowRight")
        assert len(_visible_thoughts(page)) == 5
        assert page.locator("li.branch:visible .branch-label").all_text_contents() == [
            "↳ branch replica from #3"
        ]
        assert page.url.endswith("?v=6")
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        assert len(_visible_thoughts(page)) == 3
        page.keyboard.press("End")
        assert len(_visible_thoughts(page)) == len(DEMO_THOUGHTS)
        assert page.url.endswith(f"/sessions/{session_id}")
        # A shared link opens the same view: the session at 7, compared with 4 (the diff).
        page.goto(f"{base}sessions/{session_id}?v=7&compare=4")
        page.wait_for_selector("#compare-panel:visible")
        panel = page.locator("#compare-panel").inner_text()
        assert "version 4 → 7 (3 events)" in panel
        assert page.locator("li.thought.added:visible").count() == 3
        screenshot(page, "session-compare")
        page.get_by_role("button", name="Verify chain").click()
        page.wait_for_selector(".verify-result.ok")
        assert "chain verified: 10 events" in page.locator(".verify-result").inner_text()
        assert watched.errors == []


def test_every_version_on_the_slider_is_the_ledger_state_at_that_version(
    browser: "Browser", base: str, ledger_url: str, demo_session: str
) -> None:
    expected = states_by_version(ledger_url, demo_session)
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/{demo_session}?v=1")
        page.wait_for_selector("#tree li")
        page.locator("#main").focus()
        for version, state in enumerate(expected, start=1):
            if version > 1:
                page.keyboard.press("ArrowRight")
            counts = page.locator("#counts").inner_text()
            total = "-" if state["total"] is None else state["total"]
            assert counts.startswith(
                f"{_counted(state['thoughts'], 'thought')} · "
                f"{_counted(state['revisions'], 'revision')} · "
                f"{_counted(state['branches'], 'branch')} · estimate {total} · {state['status']}"
            ), (version, counts)
            assert sorted(_visible_thoughts(page)) == sorted(state["texts"]), version
        assert watched.errors == []


@pytest.mark.slow
@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(calls, min_size=2, max_size=2))
def test_generated_sessions_show_the_ledger_state_at_every_version(
    browser: "Browser", base: str, ledger_url: str, sessions: list[list[dict[str, Any]]]
) -> None:
    named = {f"prop-{uuid.uuid4().hex[:12]}": session for session in sessions}
    record_calls(ledger_url, named)
    with watched_page(browser) as watched:
        page = watched.page
        for session_id in named:
            expected = states_by_version(ledger_url, session_id)
            page.goto(f"{base}sessions/{session_id}?v=1")
            page.wait_for_selector("#tree li")
            page.locator("#main").focus()
            for version, state in enumerate(expected, start=1):
                if version > 1:
                    page.keyboard.press("ArrowRight")
                total = "-" if state["total"] is None else state["total"]
                assert (
                    page.locator("#counts")
                    .inner_text()
                    .startswith(
                        f"{_counted(state['thoughts'], 'thought')} · "
                        f"{_counted(state['revisions'], 'revision')} · "
                        f"{_counted(state['branches'], 'branch')} · estimate {total} · "
                        f"{state['status']}"
                    )
                ), version
                assert sorted(_visible_thoughts(page)) == sorted(state["texts"]), version
        assert watched.errors == []


def _counted(count: int, noun: str) -> str:
    many = f"{noun}es" if noun.endswith("h") else f"{noun}s"
    return f"{count} {noun if count == 1 else many}"


def test_sessions_list_and_analytics_show_the_ledger(
    browser: "Browser", base: str, demo_session: str
) -> None:
    session_id = demo_session
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(base)
        row = page.locator(f'#sessions tr[data-session="{session_id}"]')
        row.locator(".badge.ok").wait_for()
        cells = row.locator("td").all_inner_texts()
        assert cells[0] == "verified"  # the chain first: the audit promise is never off-screen
        assert cells[2] == "sre-assistant · thoughtledger demo"
        assert cells[4:7] == ["9", "1", "2"]
        assert cells[9] == "complete"
        screenshot(page, "sessions")
        # The filters narrow the list, and the address keeps them.
        page.get_by_label("agent").fill("nobody")
        page.get_by_role("button", name="Filter").click()
        page.get_by_text("No sessions match.").wait_for()
        assert page.url.endswith("/?agent=nobody")
        page.get_by_label("agent").fill("sre-assistant")
        page.get_by_label("status").select_option("complete")
        page.get_by_role("button", name="Filter").click()
        row.locator(".badge.ok").wait_for()
        assert page.locator("#sessions tbody tr").count() == 1
        page.get_by_role("link", name="Analytics").click()
        page.wait_for_selector("#chart-rates svg")
        assert page.locator(".charts .chart svg").count() >= 4
        assert "revision rate" in page.locator("table.figures").inner_text()
        screenshot(page, "analytics")
        page.get_by_label("agent").fill("nobody")
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url("**/analytics?agent=nobody")
        page.locator("#chart-rates", has_text="no data yet").wait_for()
        assert "sessions\t0" in page.locator("table.figures").inner_text()
        # Back goes back: through the filtered analytics to the filtered list.
        page.go_back()
        page.wait_for_selector("#chart-rates svg")
        page.go_back()
        page.locator(f'#sessions tr[data-session="{session_id}"] a').click()
        page.wait_for_selector("#tree li.thought")
        assert len(_visible_thoughts(page)) == len(DEMO_THOUGHTS)
        assert watched.errors == []


def test_a_thought_appended_by_another_process_appears_within_a_second(
    browser: "Browser", base: str, ledger_url: str
) -> None:
    session_id = "live-session"
    append_thought(ledger_url, session_id, "The first thought", 1)
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/{session_id}")
        page.wait_for_selector(".live-dot.on")
        # This test's process is not the app's: the thought comes from another writer.
        append_thought(ledger_url, session_id, "A late idea, appended live", 2)
        appended = time.monotonic()
        page.locator("li.thought", has_text="A late idea, appended live").wait_for(timeout=1000)
        assert time.monotonic() - appended < 1.0
        assert page.locator("#version-slider").input_value() == "3"
        assert _visible_thoughts(page) == ["The first thought", "A late idea, appended live"]
        assert watched.errors == []


def test_an_edited_event_is_named_by_verify_and_badged_broken_in_the_list(
    browser: "Browser", base: str, ledger_url: str
) -> None:
    session_id = "edited-session"
    append_thought(ledger_url, session_id, "What was really thought", 1)
    append_thought(ledger_url, session_id, "And then this", 2)
    # Someone edits the stored text of version 2 by hand, behind the ledger's back.
    with sqlite3.connect(ledger_url.removeprefix("sqlite:///")) as db:
        db.execute(
            "UPDATE tl_events SET payload = replace(payload, 'really', 'never') "
            "WHERE session_id = ? AND version = 2",
            (session_id,),
        )
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/{session_id}")
        page.get_by_role("button", name="Verify chain").click()
        page.wait_for_selector(".verify-result.bad")
        verdict = page.locator(".verify-result").inner_text()
        assert "broken at version 2" in verdict
        assert page.locator("#version-slider").input_value() == "2"
        page.goto(base)
        row = page.locator(f'#sessions tr[data-session="{session_id}"]')
        assert row.locator(".badge.bad").inner_text() == "broken"
        assert watched.errors == []


def test_a_thought_holding_markup_is_shown_as_text_in_the_app_and_the_export(
    browser: "Browser", base: str, ledger_url: str, tmp_path: Path
) -> None:
    session_id = "markup-session"
    append_thought(ledger_url, session_id, "A plain first thought", 1)
    append_thought(ledger_url, session_id, XSS, 2)
    page_file = tmp_path / "session.html"
    ran = thoughtledger("export", session_id, "--html", str(page_file), "--db", ledger_url)
    assert ran.returncode == 0, ran.stderr
    assert page_file.stat().st_mode & 0o777 == 0o600
    with watched_page(browser) as watched:
        page = watched.page
        dialogs: list[str] = []

        def dismissed(dialog: "Dialog") -> None:
            dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", dismissed)
        for where in (f"{base}sessions/{session_id}", page_file.as_uri()):
            page.goto(where)
            page.wait_for_selector("#main li.thought")
            assert _visible_thoughts(page) == ["A plain first thought", XSS]
            assert page.locator("#main img, #main b, main script").count() == 0
            # The export works offline: keys move its slider as in the app.
            page.locator("#main").focus()
            page.keyboard.press("Home")
            assert _visible_thoughts(page) == []
            page.keyboard.press("ArrowRight")
            assert _visible_thoughts(page) == ["A plain first thought"]
        screenshot(page, "export")
        assert dialogs == []
        assert watched.errors == []


def test_a_fork_links_to_its_source_at_the_version_it_starts_from(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "forks.db")  # its own ledger: the module's lists no fork
    source = record_demo(url)
    forked = thoughtledger("fork", source, "--at", "4", "--db", url, "--json")
    assert forked.returncode == 0, forked.stderr
    fork_id = json.loads(forked.stdout)["sessionId"]
    with ui_server(url) as base, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{base}sessions/{fork_id}")
        page.wait_for_selector("#fork-of a")
        assert page.locator("#fork-of").inner_text() == (
            f"forked from {source} at version 4 · compare with the source"
        )
        page.locator("#fork-of a.mono").click()  # the source (the other link compares)
        page.wait_for_url(f"**/sessions/{source}?v=4")
        page.wait_for_selector("#tree li.thought")
        assert _visible_thoughts(page) == [str(t["thought"]) for t in DEMO_THOUGHTS[:3]]
        assert watched.errors == []
