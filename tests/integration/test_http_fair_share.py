"""One principal holding all it may hold open leaves room for every other (``serve --http``).

A reader that owns nothing once opened 1,024 idle live sockets on ``/ws`` and kept every other
principal, writers included, out of ``/mcp`` until it left. Now each principal holds at most
its share of live sockets (``--max-live``) and every principal together at most
``--max-live-total``: past its share a principal is refused with 429, and when the server is
full the principal holding the most gives up its oldest (closed with 1013), never another.
A real server in a child process, real sockets.
"""

import contextlib
import json
from pathlib import Path

import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.support.auth import serving_with_auth
from tests.support.live_socket import receive, send
from tests.support.mcp import call, thought
from tests.support.processes import WAIT

pytestmark = pytest.mark.anyio


def _socket(mcp_url: str, token: str) -> connect:
    return connect(
        mcp_url.replace("http://", "ws://").removesuffix("/mcp") + "/ws",
        additional_headers={"Authorization": f"Bearer {token}"},
        open_timeout=WAIT,
    )


async def _refusal(mcp_url: str, token: str) -> tuple[int, str]:
    with pytest.raises(InvalidStatus) as refused:
        async with _socket(mcp_url, token):
            pass
    answer = refused.value.response
    return answer.status_code, json.loads(answer.body or b"{}").get("error", "")


async def test_a_reader_opening_sockets_without_end_is_refused_past_its_share(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path, "--max-live", "8") as server:
        reader, writer = server.mint("mallory", "reader"), server.mint("alice", "writer")
        async with contextlib.AsyncExitStack() as held:
            opened: list[ClientConnection] = []
            refusals = []
            for _ in range(40):  # as fast as it can, far past its share
                try:
                    opened.append(await held.enter_async_context(_socket(server.url, reader)))
                except InvalidStatus as exc:
                    refusals.append(exc.response.status_code)
            assert len(opened) == 8
            assert refusals == [429] * 32
            status, message = await _refusal(server.url, reader)
            assert status == 429
            assert "principal 'mallory' already holds 8 live sockets and streams" in message
            assert "--max-live" in message
            # Every other principal: a socket of its own, and its thoughts recorded.
            async with _socket(server.url, writer) as own:
                await send(own, {"op": "ping"})
                assert await receive(own) == {"type": "pong"}
            with anyio.fail_after(WAIT):
                async with server.client(writer) as client:
                    answer = await call(client, "sequentialthinking", thought(1))
            assert answer["thoughtNumber"] == 1
        # Its sockets closed, its share is free again.
        async with _socket(server.url, reader) as again:
            await send(again, {"op": "ping"})
            assert await receive(again) == {"type": "pong"}


async def test_a_full_server_takes_room_from_the_heaviest_holder_never_another(
    tmp_path: Path,
) -> None:
    options = ("--max-live", "4", "--max-live-total", "6")
    async with serving_with_auth(tmp_path, *options) as server:
        mallory, alice = server.mint("mallory", "reader"), server.mint("alice", "reader")
        async with contextlib.AsyncExitStack() as held:
            heavy = [await held.enter_async_context(_socket(server.url, mallory)) for _ in range(4)]
            light = [await held.enter_async_context(_socket(server.url, alice)) for _ in range(2)]
            # Full: alice (2) takes the room of mallory's oldest (4), never the other way.
            light.append(await held.enter_async_context(_socket(server.url, alice)))
            with pytest.raises(ConnectionClosed) as pushed:
                await receive(heavy[0])
            assert pushed.value.rcvd is not None
            assert pushed.value.rcvd.code == 1013
            status, message = await _refusal(server.url, mallory)
            assert status == 429
            assert "its bound (--max-live-total)" in message
            for socket in [*heavy[1:], *light]:
                await send(socket, {"op": "ping"})
                assert await receive(socket) == {"type": "pong"}
