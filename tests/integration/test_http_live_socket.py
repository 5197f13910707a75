"""``serve --http``'s live socket, ``/ws``: the browser view's socket beside the MCP endpoint.

A real server in a child process, with ``--auth``, on SQLite and PostgreSQL: each principal
follows what it may read, the upgrade needs a bearer token and the server's own origin, and a
revoke closes the socket.
"""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Origin

from tests.support.backends import backend_for
from tests.support.live_socket import events_of, quiet, receive, send, subscribed
from tests.support.processes import WAIT, serving_http, thoughtledger
from thoughtledger import open_ledger
from thoughtledger.adapters.auth.tokens import TokenFile, load_tokens_or_empty, save_tokens

pytestmark = pytest.mark.anyio


def _mint(tokens: Path, name: str, role: str) -> str:
    found, token, _ = load_tokens_or_empty(tokens).add(name, role, now=datetime.now(UTC))  # type: ignore[arg-type]
    save_tokens(tokens, found)
    return token


async def _start(url: str, owner: str) -> str:
    async with open_ledger(url, ttl=None) as ledger:
        step = {"thought": f"{owner} thinks", "thought_number": 1, "total_thoughts": 1}
        outcome = await ledger.think(None, {**step, "next_thought_needed": False}, owner=owner)
        return outcome.session_id


def _socket(mcp_url: str, token: str | None, origin: str | None = None) -> connect:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return connect(
        mcp_url.replace("http://", "ws://").removesuffix("/mcp") + "/ws",
        additional_headers=headers,
        origin=Origin(origin) if origin is not None else None,
        open_timeout=WAIT,
    )


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_serve_http_streams_each_principal_what_it_may_read(
    tmp_path: Path, kind: str
) -> None:
    async with backend_for(kind, tmp_path) as backend:
        url = backend.url
        assert url is not None
        tokens = tmp_path / "tokens.json"
        save_tokens(tokens, TokenFile())
        alice, carol = _mint(tokens, "alice", "writer"), _mint(tokens, "carol", "auditor")
        own = await _start(url, "alice")
        other = await _start(url, "bob")
        async with serving_http(url, "--auth", str(tokens)) as mcp_url:
            reader: ClientConnection
            async with _socket(mcp_url, alice) as reader, _socket(mcp_url, carol) as auditor:
                await subscribed(reader, {"sessions": "all", "after": 0})
                await subscribed(auditor, {"sessions": "all", "after": 0})
                assert {item["session"] for item in await events_of(reader, 2)} == {own}
                assert {item["session"] for item in await events_of(auditor, 4)} == {own, other}
                await send(reader, {"op": "subscribe", "sessions": [other], "after": 0})
                assert (await receive(reader))["error"] == f"no session {other!r} in this ledger"
                late = await _start(url, "alice")
                assert {item["session"] for item in await events_of(reader, 2)} == {late}
                assert {item["session"] for item in await events_of(auditor, 2)} == {late}
                assert await quiet(reader)


async def test_serve_http_refuses_a_socket_without_a_token_or_from_another_origin(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens.json"
    save_tokens(tokens, TokenFile())
    alice = _mint(tokens, "alice", "writer")
    _mint(tokens, "carol", "auditor")  # the file keeps a token after the revoke
    url = f"sqlite:///{tmp_path / 'l.db'}"
    async with open_ledger(url):
        pass
    allowed = ("--allow-origin", "http://localhost:*")
    async with serving_http(url, "--auth", str(tokens), *allowed) as mcp_url:
        for token, origin, status in (
            (None, None, 401),
            (alice + "x", None, 401),
            (alice, "http://evil.example", 403),
            (alice, "http://127.0.0.1:3000", 403),  # only localhost's other ports are allowed
        ):
            with pytest.raises(InvalidStatus) as refused:
                async with _socket(mcp_url, token, origin):
                    pass
            assert refused.value.response.status_code == status
            assert "error" in json.loads(refused.value.response.body or b"{}")
        async with _socket(mcp_url, alice, "http://localhost:3000") as other_port:
            await send(other_port, {"op": "ping"})
            assert await receive(other_port) == {"type": "pong"}
        async with _socket(mcp_url, alice, mcp_url.removesuffix("/mcp")) as socket:
            await subscribed(socket, {"sessions": "all", "after": "now"})
            ran = thoughtledger("token", "revoke", "alice", "--file", str(tokens))
            assert ran.returncode == 0, ran.stderr
            with pytest.raises(ConnectionClosed) as closed:
                await receive(socket)
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1008
