"""The sessions list in Chromium, kept current over the live socket: no reload needed.

A session another process starts appears on top of the list; the page is not reloaded.
"""

from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.browser import append_thought, record_demo, ui_server, watched_page
from tests.support.cli import sqlite_url
from tests.support.processes import WAIT, python_output
from tests.support.ui_app import ui_app

if TYPE_CHECKING:
    from playwright.sync_api import Browser


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


def _start_owned(url: str, owner: str) -> str:
    """Start a session of ``owner`` from another process (as its agent would); return its id."""
    script = (
        "from tests.support.ui_app import record_owned; "
        f"print(record_owned({url!r}, {{'s': {owner!r}}})['s'])"
    )
    return python_output(script).strip()


def test_a_signed_in_reader_sees_its_own_new_sessions_appear_and_a_revoke_signs_it_out(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    ids = {"alice-1": _start_owned(url, "alice"), "bob-1": _start_owned(url, "bob")}
    with ui_app(url, tmp_path / "tokens.json") as app, watched_page(browser) as watched:
        alice = app.mint("alice", "reader")
        app.mint("carol", "auditor")  # the file keeps a token after the revoke
        page = watched.page
        page.goto(app.base)
        page.fill("#token", alice)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_selector(f'#sessions tr[data-session="{ids["alice-1"]}"]')
        page.wait_for_selector("#sessions.live", timeout=WAIT * 1000)  # over the cookie
        bobs = _start_owned(url, "bob")
        alices = _start_owned(url, "alice")
        page.wait_for_selector(f'#sessions tr[data-session="{alices}"]', timeout=WAIT * 1000)
        shown = page.locator("#sessions tbody tr").evaluate_all(
            "rows => rows.map((row) => row.dataset.session)"
        )
        assert shown == [alices, ids["alice-1"]]  # bob's sessions are not hers to see
        assert bobs not in shown
        app.revoke("alice")
        page.wait_for_selector("#signin", timeout=WAIT * 1000)  # the socket closed: signed out
    # The sign-in page asks who is signed in, and a browser logs the 401 that answers "nobody".
    assert [error for error in watched.errors if "401" not in error] == []
