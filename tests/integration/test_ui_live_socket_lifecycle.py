"""The live socket's life beside the app's connection bounds and its shutdown.

A socket is a connection that sends no request: the header deadline that closes idle HTTP
connections must not close it. An app stopped with sockets open exits cleanly, and its clients
are told with a close code.
"""

import asyncio
import os
import signal
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from tests.support.cli import sqlite_url
from tests.support.live_socket import events_of, live_socket, receive, send, subscribed
from tests.support.ui_app import record_owned, ui_app
from thoughtledger import open_ledger
from thoughtledger.adapters.common.hardened import HEADER_TIMEOUT


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_quiet_socket_outlives_the_header_deadline(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "l.db")
    async with open_ledger(url):
        pass  # an empty ledger
    with ui_app(url, None) as app:
        async with live_socket(app) as socket:
            await asyncio.sleep(HEADER_TIMEOUT + 2)
            await send(socket, {"op": "ping"})
            assert await receive(socket) == {"type": "pong"}


def test_an_app_stopped_with_sockets_open_exits_cleanly_and_closes_them(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "l.db")
    session = record_owned(url, {"one": None})["one"]
    codes: list[int] = []

    async def hold_then_stop() -> None:
        async with live_socket(app) as first, live_socket(app) as second:
            for socket in (first, second):
                await subscribed(socket, {"sessions": [session], "after": 0})
                await events_of(socket, 3)
            stop.set()
            for socket in (first, second):
                with pytest.raises(ConnectionClosed) as closed:
                    await receive(socket)
                codes.append(closed.value.rcvd.code if closed.value.rcvd else 1006)

    stop = asyncio.Event()
    with ui_app(url, None) as app:  # exit 0 on SIGTERM is checked on the way out

        async def run() -> None:
            waiting = asyncio.ensure_future(hold_then_stop())
            await stop.wait()
            os.kill(app.pid, signal.SIGTERM)  # as Ctrl-C or a service manager stops it
            await waiting

        asyncio.run(run())
    assert codes
    assert all(code in (1001, 1012) for code in codes), codes
