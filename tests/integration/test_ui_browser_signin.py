"""``thoughtledger ui --auth FILE`` in a real browser: a person signs in with a token, sees the
sessions it may read, and signs out; the token never travels in an address nor stays in the page.
"""

from pathlib import Path

from tests.support.browser import chromium, screenshot, watched_page
from tests.support.cli import sqlite_url
from tests.support.ui_app import record_owned, ui_app


def test_a_reader_signs_in_with_chromium_sees_its_own_sessions_and_signs_out(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    ids = record_owned(url, {"alice-1": "alice", "bob-1": "bob", "alice-2": "alice"})
    with (
        ui_app(url, tmp_path / "tokens.json") as app,
        chromium() as browser,
        watched_page(browser) as watched,
    ):
        alice = app.mint("alice", "reader")
        page = watched.page
        addresses: list[str] = []
        page.on("request", lambda request: addresses.append(request.url))
        page.goto(app.base)
        page.wait_for_selector("#signin")
        screenshot(page, "sign-in")
        page.fill("#token", alice)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_selector("#sessions tbody tr .badge.ok")
        shown = page.locator("#sessions tbody tr").evaluate_all(
            "rows => rows.map((row) => row.dataset.session)"
        )
        assert shown == [ids["alice-2"], ids["alice-1"]]  # newest first, bob's not among them
        assert page.locator("#who-name").inner_text() == "alice (reader)"
        assert page.locator("#nav-analytics").is_hidden()  # the analytics are an auditor's
        screenshot(page, "signed-in")

        cookies = page.context.cookies()
        assert [(c["name"], c["httpOnly"], c["sameSite"]) for c in cookies] == [
            (f"tl_ui_{app.port}", True, "Strict")
        ]
        assert cookies[0]["value"] != alice
        assert page.evaluate("document.cookie") == ""  # HttpOnly: no script reads it
        assert alice not in page.content()

        page.get_by_role("button", name="Sign out").click()
        page.wait_for_selector("#signin")
        assert page.context.cookies() == []
        assert addresses
        assert all(alice not in address for address in addresses)
    # The sign-in page asks who is signed in, and a browser logs the 401 that answers "nobody".
    assert [error for error in watched.errors if "401" not in error] == []
