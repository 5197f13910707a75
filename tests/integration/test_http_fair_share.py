"""One principal holding all it may hold open leaves room for every other (``serve --http``).

A reader that owns nothing once opened 1,024 idle live sockets on ``/ws`` and kept every other
principal, writers included, out of ``/mcp`` until it left. Now each principal holds at most
its share of live sockets (``--max-live``) and every principal together at most
``--max-live-total``: past its share a principal is refused with 429, and when the server is
full the principal holding the most gives up its oldest (closed with 1013), never another.
And one principal sending requests as fast as its answers come waits its own pace while
another principal is served. A real server in a child process, real sockets.
"""

import asyncio
import contextlib
import json
import time
from pathlib import Path

import anyio
import anyio.lowlevel
import httpx2
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.support.auth import MCP_ACCEPT, open_session, serving_with_auth
from tests.support.live_socket import receive, send
from tests.support.mcp import call, thought
from tests.support.processes import WAIT
from thoughtledger.adapters.common.pacing import BURST, RATE

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


async def test_a_principal_flooding_initialize_waits_its_pace_while_another_is_answered(
    tmp_path: Path,
) -> None:
    flood = BURST + 50
    async with serving_with_auth(tmp_path, "--max-http-sessions", "1") as server:
        mallory, alice = server.mint("mallory", "reader"), server.mint("alice", "writer")
        async with (
            httpx2.AsyncClient(timeout=WAIT, headers=_bearer(mallory)) as hers,
            httpx2.AsyncClient(timeout=WAIT, headers=_bearer(alice)) as own,
        ):
            opened = await open_session(own, server.url)
            assert opened.status_code == 200, opened.text
            session = {**MCP_ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
            waits: list[float] = []
            flooding = True

            async def alice_pings() -> None:
                while flooding:  # alice is being served throughout mallory's flood
                    asked = time.perf_counter()
                    pong = await own.post(server.url, json=PING, headers=session)
                    waits.append(time.perf_counter() - asked)
                    assert pong.status_code == 200, pong.text
                    await anyio.sleep(0.05)

            async with anyio.create_task_group() as group:
                group.start_soon(alice_pings)
                await anyio.lowlevel.checkpoint()  # alice's first request goes first
                started = time.perf_counter()
                answers = await asyncio.gather(
                    *(open_session(hers, server.url) for _ in range(flood))
                )
                took = time.perf_counter() - started
                flooding = False
    # Its one session, then its cap's refusals: each past its burst at its pace, no faster
    # than the pace lets (a lower bound, whatever the machine) ...
    assert sorted(answer.status_code for answer in answers) == [200] + [429] * (flood - 1)
    assert took >= 0.9 * (flood - BURST) / RATE, took
    # ... while alice's calls, within hers, were answered as they came.
    # Unpaced, one of hers waits behind the whole flood (about ``took``); half leaves a loaded
    # machine its noise.
    assert max(waits) < took / 2, (max(waits), took)


PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
