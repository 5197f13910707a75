"""Hostile little requests to ``thoughtledger ui --auth``: each refused in one line, none logged.

A sign-in body nested past the JSON parser's depth, a sign-in whose body never arrives whole,
and positions past what any ledger stores (on the live socket and the live feed): each is
answered as bad input (400, or the socket's ``error`` message), and the app logs no traceback.
"""

import socket
from pathlib import Path

import pytest

from tests.support.live_socket import live_socket, receive, send
from tests.support.processes import sqlite_in
from tests.support.ui_app import UiApp, record_owned, ui_app

pytestmark = pytest.mark.anyio

TOO_FAR = 2**63


@pytest.fixture
def owned(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """An SQLite ledger with one session of alice's."""
    db = sqlite_in(tmp_path)
    return db, record_owned(db, {"alice-1": "alice"})


def _unfinished_sign_in(app: UiApp) -> None:
    with socket.create_connection(("127.0.0.1", app.port), timeout=10) as raw:
        raw.sendall(
            b"POST /api/signin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 400\r\n\r\n{"token": "tl_'
        )
    # Closed halfway: the app's wait for the rest ends as for a client that left.


async def test_nested_unfinished_and_far_out_requests_are_bad_input_and_never_logged(
    tmp_path: Path, owned: tuple[str, dict[str, str]]
) -> None:
    db, ids = owned
    with ui_app(db, tmp_path / "tokens.json") as app:
        alice = app.mint("alice", "reader")
        nested = '{"token": ' + "[" * 2000 + "]" * 2000 + "}"
        with app.client({"Origin": app.origin}) as http:
            answer = http.post(
                "api/signin", content=nested, headers={"Content-Type": "application/json"}
            )
            assert answer.status_code == 400
            assert answer.json() == {"error": 'send the token as JSON: {"token": "..."}'}
            _unfinished_sign_in(app)
        with app.client({"Authorization": f"Bearer {alice}"}) as http:
            far = http.get(f"api/sessions/{ids['alice-1']}/live", params={"after": TOO_FAR})
            assert far.status_code == 400
            assert "after must be a position (0 to 9223372036854775807)" in far.json()["error"]
        async with live_socket(app, token=alice) as live:
            await send(live, "[" * 30_000 + "]" * 30_000)
            assert await receive(live) == {
                "type": "error",
                "error": "send one JSON object per message",
            }
            await send(live, {"op": "subscribe", "sessions": "all", "after": TOO_FAR})
            refused = await receive(live)
            assert refused["type"] == "error"
            assert "after must be a position (0 to 9223372036854775807)" in refused["error"]
            await send(live, {"op": "ping"})
            assert await receive(live) == {"type": "pong"}  # the socket goes on
    _, err = app.output
    assert "Traceback" not in err
    assert err == ""
