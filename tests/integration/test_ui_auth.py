"""``thoughtledger ui --auth FILE`` as a person runs it: a real process on loopback, over HTTP.

Who gets in (a sign-in cookie or a bearer token), what each principal sees (a reader its own
sessions, an auditor every one), how a revoke ends a sign-in and a live stream, which origins may
call the app, and that a token never shows up in the app's output.
"""

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.cli import sqlite_url
from tests.support.processes import WAIT
from tests.support.ui_app import UiApp, record_owned, ui_app
from thoughtledger.adapters.cli.ui import UNGUARDED_WARNING


@pytest.fixture
def ledger(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A ledger with two sessions of alice, one of bob and one of the ledger's own user."""
    url = sqlite_url(tmp_path / "l.db")
    owners = {"alice-1": "alice", "alice-2": "alice", "bob-1": "bob", "nobody's": None}
    return url, record_owned(url, owners)


@pytest.fixture
def app(tmp_path: Path, ledger: tuple[str, dict[str, str]]) -> Iterator[UiApp]:
    with ui_app(ledger[0], tmp_path / "tokens.json") as running:
        yield running


def _sign_in(http: httpx.Client, app: UiApp, token: str) -> httpx.Response:
    return http.post("api/signin", json={"token": token}, headers={"Origin": app.origin})


def _listed(http: httpx.Client) -> set[str]:
    answer = http.get("api/sessions")
    assert answer.status_code == 200, answer.text
    return {row["sessionId"] for row in answer.json()["sessions"]}


def _stream_lines(stream: httpx.Response) -> Iterator[str]:
    yield from stream.iter_lines()


def test_a_reader_signs_in_for_a_strict_httponly_cookie_and_sees_only_its_own_sessions(
    app: UiApp, ledger: tuple[str, dict[str, str]]
) -> None:
    ids = ledger[1]
    alice = app.mint("alice", "reader")
    with app.client() as http:
        answer = _sign_in(http, app, alice)
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"name": "alice", "role": "reader"}
        cookie = answer.headers["set-cookie"]
        name, _, rest = cookie.partition("=")
        assert name == f"tl_ui_{app.port}"
        assert alice not in cookie
        assert len(rest.split(";")[0]) >= 40  # 32 random bytes
        attributes = {part.strip().lower() for part in rest.split(";")[1:]}
        assert {"httponly", "path=/", "samesite=strict"} <= attributes

        assert _listed(http) == {ids["alice-1"], ids["alice-2"]}
        assert http.get("api/me").json() == {"auth": True, "name": "alice", "role": "reader"}
        own = http.get(f"api/sessions/{ids['alice-1']}").json()["events"]
        assert [event.get("x") for event in own[1:]] == ["alice-1 thinks", "alice-1 again"]
        # Another principal's session (or the ledger's own user's) answers as a missing one.
        for other in (ids["bob-1"], ids["nobody's"], "no-such-session"):
            for path in (f"api/sessions/{other}", f"api/sessions/{other}/verify"):
                refused = http.get(path)
                assert refused.status_code == 404, path
                assert refused.json() == {"error": f"no session {other!r} in this ledger"}
            assert http.get(f"api/sessions/{other}/live").status_code == 404
        badges = http.get("api/badges", params={"ids": ",".join(ids.values())}).json()
        assert [badge["sessionId"] for badge in badges["badges"]] == [
            ids["alice-1"],
            ids["alice-2"],
        ]
        stats = http.get("api/stats")
        assert stats.status_code == 403
        assert "auditor" in stats.json()["error"]
        page = http.get(f"sessions/{ids['alice-1']}")
        assert page.status_code == 200
        assert '<script src="/static/app.js"' in page.text

        assert http.post("api/signout", headers={"Origin": app.origin}).status_code == 200
        assert http.get("api/sessions").status_code == 401


def test_an_auditor_sees_every_session_and_the_analytics_with_a_bearer_token(
    app: UiApp, ledger: tuple[str, dict[str, str]]
) -> None:
    ids = ledger[1]
    carol = app.mint("carol", "auditor")
    writer = app.mint("bob", "writer")
    with app.client({"Authorization": f"Bearer {carol}"}) as http:
        assert _listed(http) == set(ids.values())
        assert http.get(f"api/sessions/{ids['bob-1']}").status_code == 200
        stats = http.get("api/stats")
        assert stats.status_code == 200
        assert stats.json()["overall"]["sessions"] == 4
        assert http.get("").status_code == 200  # the app's page, not the sign-in
    with app.client({"Authorization": f"Bearer {writer}"}) as http:
        assert _listed(http) == {ids["bob-1"]}


def test_no_token_a_wrong_one_or_a_forged_cookie_gets_401_and_pages_get_the_sign_in_page(
    app: UiApp,
) -> None:
    alice = app.mint("alice", "reader")
    wrong = "tl_" + "A" * 43
    with app.client() as http:
        refused = _sign_in(http, app, wrong)
        assert refused.status_code == 401
        assert "set-cookie" not in refused.headers
        bare = http.get("api/sessions")
        assert bare.status_code == 401
        assert bare.headers["www-authenticate"] == "Bearer"
        assert "sign in" in bare.json()["error"]
        for path in ("", "analytics", "sessions/anything"):
            page = http.get(path)
            assert page.status_code == 401
            assert page.headers["content-type"].startswith("text/html")
            assert '<form id="signin"' in page.text
            assert "app.js" not in page.text
        # The files the sign-in page needs are served to anyone: they hold no data.
        assert http.get("static/signin.js").status_code == 200
        http.cookies.set(f"tl_ui_{app.port}", "forged-value")
        assert http.get("api/sessions").status_code == 401
    with app.client({"Authorization": f"Bearer {wrong}"}) as http:
        assert http.get("api/sessions").status_code == 401
    with app.client({"Authorization": f"Basic {alice}"}) as http:
        assert http.get("api/sessions").status_code == 401


def test_a_sign_in_must_be_json_from_the_apps_own_origin(app: UiApp) -> None:
    alice = app.mint("alice", "reader")
    with app.client() as http:
        # A cross-site form can post urlencoded text without asking: refused as such.
        form = http.post("api/signin", data={"token": alice}, headers={"Origin": app.origin})
        assert form.status_code == 415
        foreign = http.post(
            "api/signin", json={"token": alice}, headers={"Origin": "http://localhost:1"}
        )
        assert foreign.status_code == 403
        assert "set-cookie" not in foreign.headers
        for body in (b"{}", b"[1]", b"not json", b'{"token": 7}'):
            answer = http.post(
                "api/signin",
                content=body,
                headers={"Origin": app.origin, "Content-Type": "application/json"},
            )
            assert answer.status_code == 400, body
        huge = http.post(
            "api/signin",
            json={"token": "x" * 10_000},
            headers={"Origin": app.origin},
        )
        assert huge.status_code == 413
        assert "set-cookie" not in huge.headers
        assert http.get("api/sessions").status_code == 401


def test_a_revoke_ends_the_sign_in_and_every_live_stream_of_the_token(
    app: UiApp, ledger: tuple[str, dict[str, str]]
) -> None:
    session = ledger[1]["alice-1"]
    alice = app.mint("alice", "reader")
    app.mint("carol", "auditor")  # the file keeps a token after the revoke
    with app.client() as browser, app.client({"Authorization": f"Bearer {alice}"}) as script:
        assert _sign_in(browser, app, alice).status_code == 200
        live = f"api/sessions/{session}/live"
        with browser.stream("GET", live) as first, script.stream("GET", live) as second:
            streams = [_stream_lines(first), _stream_lines(second)]
            assert [next(lines) for lines in streams] == [": following", ": following"]
            app.revoke("alice")
            # Each stream ends with a signed-out event (a read past WAIT seconds would fail).
            for lines in streams:
                rest = list(lines)
                assert "event: signed-out" in rest, rest
        assert browser.get("api/sessions").status_code == 401
        assert script.get("api/sessions").status_code == 401
        assert browser.get("").status_code == 401  # the sign-in page again


def test_the_token_appears_in_no_url_and_nowhere_in_the_apps_output(
    tmp_path: Path, ledger: tuple[str, dict[str, str]]
) -> None:
    urls: list[str] = []
    with ui_app(ledger[0], tmp_path / "tokens.json") as app:
        alice = app.mint("alice", "reader")
        hooks = {"request": [lambda request: urls.append(str(request.url))]}
        with httpx.Client(base_url=app.base, timeout=WAIT, event_hooks=hooks) as http:
            assert _sign_in(http, app, alice).status_code == 200
            assert http.get("").status_code == 200
            assert http.get("api/sessions").status_code == 200
            assert _sign_in(http, app, alice + "x").status_code == 401
    out, err = app.output
    assert urls
    assert all(alice not in url for url in urls)
    assert alice not in out
    assert alice not in err
    assert out.startswith("thoughtledger ui: http://127.0.0.1:")
    assert err == ""  # with --auth: no warning, and no request is logged


def test_without_auth_the_app_warns_as_serve_does_and_takes_only_its_own_origin(
    ledger: tuple[str, dict[str, str]],
) -> None:
    with ui_app(ledger[0], None, "--allow-origin", "http://LOCALHOST:3000/") as app:
        own = [f"http://{host}:{app.port}" for host in ("127.0.0.1", "localhost", "[::1]")]
        with app.client() as http:
            for origin in (*own, "http://localhost:3000", None):
                headers = {"Origin": origin} if origin is not None else {}
                answer = http.get("api/sessions", headers=headers)
                assert answer.status_code == 200, origin
                assert len(answer.json()["sessions"]) == 4
            for origin in (
                f"http://localhost:{app.port + 1}",
                "http://localhost:3001",
                f"https://127.0.0.1:{app.port}",
                "null",
                "http://evil.example",
                "http://\u00e9vil.example",
            ):
                raw = origin.encode("utf-8")  # sent as bytes: the app must cope with any
                refused = http.get("api/sessions", headers={b"Origin": raw})
                assert refused.status_code == 403, origin
                message = refused.json()["error"]
                assert message.isascii()  # echoed escaped: nothing a terminal would act on
                assert "--allow-origin" in message
                assert refused.headers["content-security-policy"].startswith("default-src")
            assert http.get("api/me").json() == {"auth": False, "name": None, "role": None}
            assert http.post("api/signin", json={"token": "t"}).status_code == 404
    out, err = app.output
    assert out.startswith("thoughtledger ui: http://127.0.0.1:")
    assert err == f"thoughtledger ui: warning: {UNGUARDED_WARNING}\n"
