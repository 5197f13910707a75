"""A client of ``thoughtledger ui``'s live socket (``/api/ws``), on the ``websockets`` library.

Usage::

    async with live_socket(app, token=alice) as socket:
        await send(socket, {"op": "subscribe", "sessions": "all", "after": 0})
        assert (await receive(socket))["type"] == "subscribed"
        events = await events_of(socket, 4)
"""

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Origin

from tests.support.processes import WAIT
from tests.support.ui_app import UiApp

Message = dict[str, Any]


def socket_url(app: UiApp) -> str:
    """The live socket's address on ``app``."""
    return f"ws://127.0.0.1:{app.port}/api/ws"


@asynccontextmanager
async def live_socket(
    app: UiApp,
    *,
    token: str | None = None,
    origin: str | None = None,
    max_queue: int | None = 16,
) -> AsyncIterator[ClientConnection]:
    """A socket to ``app``, sending ``token`` as a bearer token and ``origin`` when given."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with connect(
        socket_url(app),
        additional_headers=headers,
        origin=Origin(origin) if origin is not None else None,
        open_timeout=WAIT,
        max_queue=max_queue,
    ) as socket:
        yield socket


async def send(socket: ClientConnection, message: Message | str) -> None:
    """Send ``message`` (an object as JSON, a string as it is)."""
    await socket.send(message if isinstance(message, str) else json.dumps(message))


async def receive(socket: ClientConnection) -> Message:
    """The next message, as JSON (fails after :data:`WAIT` seconds)."""
    text = await asyncio.wait_for(socket.recv(), WAIT)
    found = json.loads(text)
    assert isinstance(found, dict), found
    return found


async def subscribed(socket: ClientConnection, message: Message) -> Message:
    """Send a subscribe ``message``; return the server's ``subscribed`` answer."""
    await send(socket, {"op": "subscribe", **message})
    answer = await receive(socket)
    assert answer["type"] == "subscribed", answer
    return answer


async def events_of(socket: ClientConnection, count: int) -> list[Message]:
    """The next ``count`` messages, each checked to be an event."""
    found = [await receive(socket) for _ in range(count)]
    assert all(item["type"] == "event" for item in found), found
    return found


async def quiet(socket: ClientConnection) -> bool:
    """Whether nothing arrives for half a second."""
    try:
        extra = await asyncio.wait_for(socket.recv(), 0.5)
    except TimeoutError:
        return True
    raise AssertionError(f"unexpected message: {extra!r}")
