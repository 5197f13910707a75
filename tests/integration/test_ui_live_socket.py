"""``thoughtledger ui``'s live socket, ``/api/ws``: a real app process, a real WebSocket client.

Subscriptions to one session, several, or all, changed on one socket; resuming from a position;
bad messages answered without harm; on SQLite and on PostgreSQL.
"""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from tests.support.backends import backend_for
from tests.support.live_socket import (
    Message,
    events_of,
    live_socket,
    quiet,
    receive,
    send,
    subscribed,
)
from tests.support.ui_app import UiApp, ui_app
from thoughtledger import open_ledger

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A ledger URL on each durable backend, holding nothing yet."""
    async with backend_for(request.param, tmp_path) as backend:
        assert backend.url is not None
        async with open_ledger(backend.url, ttl=None):
            pass  # made (tables, schema) before the app opens it for reading
        yield backend.url


@pytest.fixture
def app(url: str) -> Iterator[UiApp]:
    with ui_app(url, None) as running:
        yield running


def thought(number: int, text: str = "") -> dict[str, Any]:
    return {
        "thought": text or f"thought {number}",
        "thought_number": number,
        "total_thoughts": max(number, 2),
        "next_thought_needed": True,
    }


async def record(url: str, session_id: str | None, number: int, owner: str | None = None) -> str:
    """Record thought ``number`` (in a new session when ``session_id`` is None)."""
    async with open_ledger(url, ttl=None) as ledger:
        outcome = await ledger.think(session_id, thought(number), owner=owner)
        return outcome.session_id


async def messages_for(socket: ClientConnection, name: str, count: int) -> list[Message]:
    """The next ``count`` events of subscription ``name`` (others' messages are skipped)."""
    found: list[Message] = []
    while len(found) < count:
        message = await receive(socket)
        if message.get("id") == name:
            assert message["type"] == "event", message
            found.append(message)
    return found


async def test_one_socket_follows_one_session_then_several_then_all_in_order(
    app: UiApp, url: str
) -> None:
    first = await record(url, None, 1)
    second = await record(url, None, 1)
    async with live_socket(app) as socket:
        answer = await subscribed(socket, {"id": "one", "sessions": [first], "after": 0})
        assert answer == {"type": "subscribed", "id": "one", "sessions": [first], "after": 0}
        caught_up = await events_of(socket, 2)  # the session's start and its first thought
        assert [item["event"]["k"] for item in caught_up] == ["session.started", "thought.recorded"]
        assert {item["session"] for item in caught_up} == {first}
        await record(url, second, 2)  # another session's: not this subscription's
        await record(url, first, 2)
        live = await events_of(socket, 1)
        assert (live[0]["session"], live[0]["event"]["x"]) == (first, "thought 2")
        positions = [item["position"] for item in caught_up + live]
        assert positions == sorted(set(positions))
        assert len(positions) == 3

        await subscribed(socket, {"id": "two", "sessions": [first, second], "after": 0})
        both = await messages_for(socket, "two", 6)
        assert [item["position"] for item in both] == sorted(item["position"] for item in both)
        assert {item["session"] for item in both} == {first, second}

        await send(socket, {"op": "unsubscribe", "id": "one"})
        assert await receive(socket) == {"type": "unsubscribed", "id": "one"}
        every = await subscribed(socket, {"id": "every", "sessions": "all", "after": "now"})
        assert every["after"] == both[-1]["position"]
        third = await record(url, None, 1)
        started = await messages_for(socket, "every", 2)
        assert {item["session"] for item in started} == {third}
        assert started[0]["event"]["k"] == "session.started"
        assert await quiet(socket)  # "one" is gone and "two" does not follow the new session


async def test_a_client_resumes_after_the_last_position_it_holds(app: UiApp, url: str) -> None:
    session = await record(url, None, 1)
    for number in range(2, 6):
        await record(url, session, number)
    async with live_socket(app) as socket:
        await subscribed(socket, {"sessions": "all", "after": 0})
        whole = await events_of(socket, 6)
    async with live_socket(app) as socket:
        held = whole[2]["position"]
        answer = await subscribed(socket, {"sessions": [session], "after": held})
        assert answer["id"] == "s1"  # named by the server
        rest = await events_of(socket, 3)
        assert rest == [{**item, "id": "s1"} for item in whole[3:]]
        assert await quiet(socket)


async def test_bad_messages_are_answered_and_the_socket_goes_on(app: UiApp, url: str) -> None:
    session = await record(url, None, 1)
    async with live_socket(app) as socket:
        bad: list[Any] = [
            "not json",
            "[1, 2]",
            {"op": "shout"},
            {"op": "subscribe", "sessions": [], "after": 0},
            {"op": "subscribe", "sessions": "some", "after": 0},
            {"op": "subscribe", "sessions": ["../etc/passwd"], "after": 0},
            {"op": "subscribe", "sessions": ["no-such-session"], "after": 0},
            {"op": "subscribe", "sessions": [session] * 101, "after": 0},
            {"op": "subscribe", "sessions": "all", "after": -1},
            {"op": "subscribe", "sessions": "all", "after": "later"},
            {"op": "subscribe", "id": "a b", "sessions": "all"},
            {"op": "unsubscribe", "id": "never"},
            {"op": "unsubscribe"},
        ]
        for message in bad:
            await send(socket, message)
            answer = await receive(socket)
            assert answer["type"] == "error", (message, answer)
            assert answer["error"], message
        await socket.send(b"\x00\x01")
        assert (await receive(socket))["error"] == "send JSON as text, not binary"
        await subscribed(socket, {"id": "x", "sessions": [session], "after": 0})
        await send(socket, {"op": "subscribe", "id": "x", "sessions": "all"})
        await send(socket, {"op": "ping"})
        # The subscription's events, the refusal and the pong: the socket still works.
        seen = [await receive(socket) for _ in range(4)]
        kinds = sorted(item["type"] for item in seen)
        assert kinds == ["error", "event", "event", "pong"], seen
        refusal = next(item for item in seen if item["type"] == "error")
        assert refusal["error"] == "subscription 'x' is already open: unsubscribe it first"
        await send(socket, "x" * (64 * 1024 + 1))  # past the largest message: closed
        with pytest.raises(ConnectionClosed) as closed:
            await receive(socket)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1009


async def test_a_socket_holds_at_most_sixteen_subscriptions(app: UiApp, url: str) -> None:
    await record(url, None, 1)
    async with live_socket(app) as socket:
        for number in range(16):
            await subscribed(socket, {"id": f"n{number}", "sessions": "all", "after": "now"})
        await send(socket, {"op": "subscribe", "sessions": "all", "after": "now"})
        assert (await receive(socket))["error"] == "at most 16 subscriptions on one socket"
        await send(socket, {"op": "unsubscribe", "id": "n3"})
        assert (await receive(socket))["type"] == "unsubscribed"
        await subscribed(socket, {"id": "n3", "sessions": "all", "after": "now"})
