"""Who may open ``thoughtledger ui --auth FILE``'s live socket, and what each one sees on it.

A bearer token or the sign-in cookie, never a token in the URL; a reader sees its own sessions
only, an auditor all; a revoke ends the socket within seconds; a page of another origin cannot
open it through the user's browser. On SQLite and PostgreSQL.
"""

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.support.backends import Backend, pg_url
from tests.support.live_socket import events_of, live_socket, quiet, receive, send, subscribed
from tests.support.processes import WAIT
from tests.support.ui_app import UiApp, record_owned, ui_app
from thoughtledger import open_ledger

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A ledger with a session of alice, one of bob and one of the ledger's own user."""
    if request.param == "postgres" and pg_url() is None:
        pytest.skip("no PostgreSQL configured (set THOUGHTLEDGER_TEST_PG_URL)")
    backend = Backend(request.param, tmp_path)
    url = backend.url
    assert url is not None
    try:
        yield url, record_owned(url, {"alice-1": "alice", "bob-1": "bob", "nobody's": None})
    finally:
        asyncio.run(backend.drop())


@pytest.fixture
def app(tmp_path: Path, ledger: tuple[str, dict[str, str]]) -> Iterator[UiApp]:
    with ui_app(ledger[0], tmp_path / "tokens.json") as running:
        yield running


async def _more(url: str, session_id: str, owner: str) -> None:
    async with open_ledger(url, ttl=None) as opened:
        step = {"thought": "more", "thought_number": 3, "total_thoughts": 3}
        await opened.think(session_id, {**step, "next_thought_needed": False}, owner=owner)


async def test_a_reader_follows_only_its_own_sessions_and_an_auditor_all(
    tmp_path: Path, ledger: tuple[str, dict[str, str]]
) -> None:
    with ui_app(ledger[0], tmp_path / "tokens.json") as app:
        await _follow_as_reader_and_auditor(app, ledger)
    out, err = app.output
    assert err == ""  # no socket is logged, and no token
    assert out.startswith("thoughtledger ui: http://127.0.0.1:")


async def _follow_as_reader_and_auditor(app: UiApp, ledger: tuple[str, dict[str, str]]) -> None:
    url, ids = ledger
    alice, carol = app.mint("alice", "reader"), app.mint("carol", "auditor")
    async with live_socket(app, token=alice) as reader, live_socket(app, token=carol) as auditor:
        for other in (ids["bob-1"], ids["nobody's"]):
            await send(reader, {"op": "subscribe", "sessions": [other], "after": 0})
            # The words a missing session gets: nothing tells that it exists.
            assert await receive(reader) == {
                "type": "error",
                "error": f"no session {other!r} in this ledger",
            }
        await subscribed(reader, {"sessions": "all", "after": 0})
        own = await events_of(reader, 3)
        assert {item["session"] for item in own} == {ids["alice-1"]}
        await subscribed(auditor, {"sessions": "all", "after": 0})
        every = await events_of(auditor, 9)
        assert {item["session"] for item in every} == set(ids.values())
        await _more(url, ids["bob-1"], "bob")
        await _more(url, ids["alice-1"], "alice")
        live = await events_of(reader, 1)
        assert live[0]["session"] == ids["alice-1"]
        assert [item["session"] for item in await events_of(auditor, 2)] == [
            ids["bob-1"],
            ids["alice-1"],
        ]
        assert await quiet(reader)


async def test_the_socket_takes_a_bearer_token_or_the_sign_in_cookie_and_nothing_else(
    app: UiApp, ledger: tuple[str, dict[str, str]]
) -> None:
    alice = app.mint("alice", "reader")
    socket_url = f"ws://127.0.0.1:{app.port}/api/ws"
    for headers in ({}, {"Authorization": f"Bearer {alice}x"}, {"Authorization": alice}):
        with pytest.raises(InvalidStatus) as refused:
            async with connect(socket_url, additional_headers=headers, open_timeout=WAIT):
                pass
        assert refused.value.response.status_code == 401
        assert "error" in json.loads(refused.value.response.body or b"{}")
    # A token in the URL is no way in either.
    with pytest.raises(InvalidStatus):
        async with connect(f"{socket_url}?token={alice}", open_timeout=WAIT):
            pass
    async with httpx.AsyncClient(base_url=app.base, timeout=WAIT) as http:
        origin = {"Origin": app.origin}
        signed = await http.post("api/signin", json={"token": alice}, headers=origin)
        assert signed.status_code == 200
        cookie = f"tl_ui_{app.port}={http.cookies[f'tl_ui_{app.port}']}"
    headers = {"Cookie": cookie}
    async with connect(
        socket_url, additional_headers=headers, origin=None, open_timeout=WAIT
    ) as socket:
        await subscribed(socket, {"sessions": [ledger[1]["alice-1"]], "after": 0})
        assert len(await events_of(socket, 3)) == 3


async def test_a_revoke_closes_the_socket_within_seconds(
    app: UiApp, ledger: tuple[str, dict[str, str]]
) -> None:
    alice = app.mint("alice", "reader")
    app.mint("carol", "auditor")  # the file keeps a token after the revoke
    async with live_socket(app, token=alice) as socket:
        await subscribed(socket, {"sessions": "all", "after": "now"})
        app.revoke("alice")
        with pytest.raises(ConnectionClosed) as closed:
            await receive(socket)  # fails past WAIT seconds
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1008
        assert closed.value.rcvd.reason.startswith("signed out")


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "http://localhost:1", "null", "https://127.0.0.1"]
)
async def test_a_page_of_another_origin_cannot_open_the_socket(
    app: UiApp, ledger: tuple[str, dict[str, str]], origin: str
) -> None:
    alice = app.mint("alice", "reader")
    with pytest.raises(InvalidStatus) as refused:
        async with live_socket(app, token=alice, origin=origin):
            pass
    assert refused.value.response.status_code == 403
    assert "--allow-origin" in json.loads(refused.value.response.body or b"{}")["error"]
    async with live_socket(app, token=alice, origin=app.origin) as own:
        await send(own, {"op": "ping"})
        assert await receive(own) == {"type": "pong"}
