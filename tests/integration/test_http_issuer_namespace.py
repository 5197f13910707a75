"""Two sources of principals never meet, and an expired token is refused alike on every door.

``serve --http --auth FILE --auth-issuer URL`` takes the token file's tokens and an issuer's
JWTs: a JWT whose ``sub`` is ``alice`` is not the token file's ``alice`` (it cannot read,
append to or clear her sessions) unless the operator maps that subject on purpose
(``--map-subject alice=alice``). A JWT past its ``exp`` is refused on ``/mcp`` and ``/ws``
alike, and an open ``/ws`` of a token closes once the token expires. Real issuer, real server.
"""

import time
from pathlib import Path

import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.support.auth import serving_with_auth
from tests.support.issuer import issuing
from tests.support.mcp import call, refused, thought
from tests.support.processes import WAIT
from tests.support.ui_app import record_owned, ui_app

pytestmark = pytest.mark.anyio


def _ws(mcp_url: str, token: str) -> connect:
    return connect(
        mcp_url.replace("http://", "ws://").removesuffix("/mcp") + "/ws",
        additional_headers={"Authorization": f"Bearer {token}"},
        open_timeout=WAIT,
    )


async def test_a_jwt_whose_sub_is_a_token_files_name_is_another_principal(
    tmp_path: Path,
) -> None:
    with issuing() as issuer:
        async with serving_with_auth(tmp_path, "--auth-issuer", issuer.url) as server:
            alice_file = server.mint("alice")
            alice_jwt = issuer.token("alice", server.url)
            with anyio.fail_after(WAIT):
                async with server.client(alice_file) as client:
                    mine = await call(client, "sequentialthinking", thought(1))
                session = {"sessionId": mine["sessionId"]}
                async with server.client(alice_jwt) as client:
                    read = await refused(client, "thinking_history", session)
                    # Naming her session starts one of the JWT's own, elsewhere.
                    appended = await call(client, "sequentialthinking", {**thought(2), **session})
                async with server.client(alice_file) as client:
                    still = await call(client, "thinking_history", session)
    assert read == f"no session '{mine['sessionId']}' in this ledger"
    assert appended["sessionId"] != mine["sessionId"]
    assert [t["thought"] for t in still["history"]] == ["thought 1"]


async def test_an_operator_maps_a_subject_to_a_token_files_name_on_purpose(
    tmp_path: Path,
) -> None:
    with issuing() as issuer:
        async with serving_with_auth(
            tmp_path, "--auth-issuer", issuer.url, "--map-subject", "alice=alice"
        ) as server:
            alice_file = server.mint("alice")
            with anyio.fail_after(WAIT):
                async with server.client(alice_file) as client:
                    mine = await call(client, "sequentialthinking", thought(1))
                async with server.client(issuer.token("alice", server.url)) as client:
                    read = await call(client, "thinking_history", {"sessionId": mine["sessionId"]})
                async with server.client(issuer.token("bob", server.url)) as client:
                    other = await refused(
                        client, "thinking_history", {"sessionId": mine["sessionId"]}
                    )
    assert [t["thought"] for t in read["history"]] == ["thought 1"]
    assert other.startswith("no session")


def test_the_browser_view_keeps_the_issuers_principals_apart_too(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    ids = record_owned(url, {"alice-1": "alice"})
    with issuing() as issuer:
        audience = "thoughtledger-ui"
        options = ("--auth-issuer", issuer.url, "--audience", audience)
        with ui_app(url, tmp_path / "tokens.json", *options) as app:
            alice_file = app.mint("alice")
            for token, expected in (
                (alice_file, {ids["alice-1"]}),
                (issuer.token("alice", audience), set()),
            ):
                with app.client({"Authorization": f"Bearer {token}"}) as http:
                    answer = http.get("api/sessions")
                    assert answer.status_code == 200, answer.text
                    assert {row["sessionId"] for row in answer.json()["sessions"]} == expected
                    page = http.get(f"api/sessions/{ids['alice-1']}")
                    assert page.status_code == (200 if expected else 404)


async def _until_closed(socket: ClientConnection) -> None:
    with anyio.fail_after(WAIT):
        while True:
            await socket.recv()


async def test_an_expired_jwt_is_refused_on_every_door_and_an_open_socket_closes(
    tmp_path: Path,
) -> None:
    with issuing() as issuer:
        async with serving_with_auth(tmp_path, "--auth-issuer", issuer.url) as server:
            key = issuer.keys[issuer.kid]
            good = issuer.claims("alice", server.url)
            expired = issuer.sign({**good, "exp": int(time.time()) - 5}, key, issuer.kid)
            async with server.http(expired) as http:
                answer = await http.post(server.url, json={})
                assert answer.status_code == 401
            # Within PyJWT's 30 s of leeway, where /ws let it in and /mcp did not.
            with pytest.raises(InvalidStatus) as refused_ws:
                async with _ws(server.url, expired):
                    pass
            assert refused_ws.value.response.status_code == 401
            soon = issuer.sign({**good, "exp": int(time.time()) + 3}, key, issuer.kid)
            async with _ws(server.url, soon) as socket:
                opened = time.monotonic()
                with pytest.raises(ConnectionClosed):
                    await _until_closed(socket)
                closed_after = time.monotonic() - opened
            assert socket.close_code == 1008
            assert closed_after < 3 + 2 * 2 + 1  # its exp, then at most two checks (2 s each)
