"""A bearer token a client puts in an address never reaches a log.

Tokens are taken from the ``Authorization`` header only, so ``/ws?token=tl_...`` is refused,
but the server logs each WebSocket request with its address: the real ``serve --http --auth``
and ``ui --auth`` in child processes are asked with tokens in their addresses, and their whole
logs are read for them.
"""

from pathlib import Path

import httpx2
import pytest

from tests.support.auth import serving_with_auth
from tests.support.processes import sqlite_in
from tests.support.ui_app import record_owned, ui_app

pytestmark = pytest.mark.anyio

UPGRADE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}


async def test_serve_never_logs_a_token_given_in_an_address(tmp_path: Path) -> None:
    rest: list[str] = []
    async with serving_with_auth(tmp_path, rest=rest) as server:
        alice = server.mint("alice")
        base = server.url.removesuffix("/mcp")
        async with httpx2.AsyncClient(timeout=20) as http:
            for address in (
                f"{base}/ws?token={alice}",
                f"{base}/ws?access_token={alice}&x=1",
                f"{base}/ws?bearer=Bearer%20{alice}",
                f"{base}/mcp?token={alice}",
            ):
                answer = await http.get(address, headers=UPGRADE)
                assert answer.status_code in (401, 403)  # the address is no place for it
    log = "".join(rest)
    assert "/ws?token=***" in log  # the request was logged, its token masked
    assert alice not in log
    assert alice[3:20] not in log  # nor any recognisable part of it


def test_ui_never_logs_a_token_given_in_an_address(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    record_owned(db, {"alice-1": "alice"})
    with ui_app(db, tmp_path / "tokens.json") as app:
        alice = app.mint("alice")
        with app.client() as http:
            for address in (f"/api/ws?token={alice}", f"/api/me?access_token={alice}"):
                assert http.get(address, headers=UPGRADE).status_code in (401, 403)
    out, err = app.output
    assert alice not in out + err
