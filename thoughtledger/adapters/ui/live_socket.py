"""The live socket (``/api/ws``): several subscriptions to the ledger over one WebSocket.

Each subscription is the ledger's catch-up subscription (in position order, no gap, no
duplicate), filtered to the sessions it names, or to every session the principal may read.
What the server sends goes through one bounded outbox per socket: a client that reads too
slowly fills it, and once it has had no room for :data:`STALL_SECONDS` the socket closes with
:data:`CLOSE_TOO_SLOW`, so the server's memory never grows with a reader that has stopped
reading. The principal is checked again every few seconds; a sign-out or a revoked token ends
the socket with :data:`CLOSE_SIGNED_OUT`. The messages are drawn in ``docs/browser.md``.
"""

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from thoughtledger.adapters.ui.feed import Allowed
from thoughtledger.adapters.ui.live_messages import (
    BadMessageError,
    Ping,
    Subscribe,
    Unsubscribe,
    parse_message,
)
from thoughtledger.adapters.ui.payload import JsonDict, event_json, json_bytes
from thoughtledger.api import Ledger, LedgerError, Principal, SessionNotFoundError

CLOSE_SIGNED_OUT = 1008
"""Policy violation: the principal was signed out, or its token revoked or expired."""

CLOSE_TOO_SLOW = 1013
"""Try again later: the client read too slowly and the socket's outbox stayed full."""

CLOSE_FAILED = 1011
"""The server failed (the ledger could not be read)."""

SUBSCRIPTIONS_MAX = 16
"""The most subscriptions one socket may hold at once."""

OUTBOX_BYTES = 1 << 20
"""The most bytes of messages a socket holds for its client before the client must read."""

STALL_SECONDS = 5.0
"""How long the outbox may stay full before the client counts as too slow."""


class _TooSlowError(Exception):
    """The outbox stayed full for longer than the stall allows."""


@dataclass
class _Closing:
    code: int
    reason: str


class _Outbox:
    """Messages waiting for the client, at most ``budget`` bytes of them (one more if larger)."""

    def __init__(self, budget: int, stall: float) -> None:
        self._items: deque[bytes] = deque()
        self._size = 0
        self._budget = budget
        self._stall = stall
        self._room = asyncio.Event()
        self._ready = asyncio.Event()

    async def put(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._stall
        while self._size and self._size + len(data) > self._budget:
            self._room.clear()
            try:
                await asyncio.wait_for(self._room.wait(), max(deadline - loop.time(), 0.0))
            except TimeoutError:
                raise _TooSlowError from None
        self._items.append(data)
        self._size += len(data)
        self._ready.set()

    async def take(self) -> bytes:
        while not self._items:
            self._ready.clear()
            await self._ready.wait()
        data = self._items.popleft()
        self._size -= len(data)
        self._room.set()
        return data


class LiveSocket:
    """One client's socket: its subscriptions, its outbox, its checks.

    Args:
        ledger: The ledger followed.
        websocket: The accepted-to-be socket.
        who: The principal (``None``: the app has no authentication; everything is readable).
        allowed: Whether the principal is still signed in (``None``: never checked).
        recheck: Seconds between those checks.
        stall: Seconds the outbox may stay full (see :data:`STALL_SECONDS`).
    """

    def __init__(
        self,
        ledger: Ledger,
        websocket: WebSocket,
        who: Principal | None,
        *,
        allowed: Allowed | None,
        recheck: float,
        stall: float = STALL_SECONDS,
    ) -> None:
        self._ledger = ledger
        # The one door: what the socket may follow is the access door's answer for ``who``.
        self._scope = ledger.as_principal(who)
        self._socket = websocket
        self._allowed = allowed
        self._recheck = recheck
        self._outbox = _Outbox(OUTBOX_BYTES, stall)
        self._subscriptions: dict[str, asyncio.Task[None]] = {}
        self._named = 0
        self._closing: asyncio.Future[_Closing | None] = asyncio.get_running_loop().create_future()

    async def run(self) -> None:
        """Serve the socket until the client leaves, or the server ends it with a close code."""
        try:
            await self._socket.accept()
        except (WebSocketDisconnect, RuntimeError, OSError):
            return  # the client left before the socket opened
        tasks = [
            asyncio.create_task(self._guard(self._send())),
            asyncio.create_task(self._guard(self._receive())),
        ]
        if self._allowed is not None:
            tasks.append(asyncio.create_task(self._guard(self._check(self._allowed))))
        try:
            closing = await self._closing
        finally:
            for task in [*tasks, *self._subscriptions.values()]:
                task.cancel()
            await asyncio.gather(*tasks, *self._subscriptions.values(), return_exceptions=True)
        if closing is not None:
            # The close frame waits behind what the client has not read: it goes out once the
            # client reads again, or the server's pings go unanswered and the server drops the
            # connection (the task ends then, holding nothing but the socket meanwhile).
            with contextlib.suppress(Exception):
                await self._socket.close(closing.code, closing.reason)

    def push_out(self) -> None:
        """End the socket with 1013: its slot was taken back for another's (see shares)."""
        reason = "pushed out: the server's live sockets are full; reconnect later"
        self._end(_Closing(CLOSE_TOO_SLOW, reason))

    def _end(self, closing: _Closing | None) -> None:
        if not self._closing.done():
            self._closing.set_result(closing)

    async def _guard(self, work: Any) -> None:
        try:
            await work
        except _TooSlowError:
            reason = "too slow: read faster, then resume from your last position"
            self._end(_Closing(CLOSE_TOO_SLOW, reason))
        except LedgerError as exc:
            self._end(_Closing(CLOSE_FAILED, str(exc)[:120]))
        except (WebSocketDisconnect, RuntimeError, OSError):
            self._end(None)  # the client left (a send on a closed socket raises RuntimeError)

    async def _send(self) -> None:
        while True:
            await self._socket.send_text((await self._outbox.take()).decode())

    async def _reply(self, message: JsonDict) -> None:
        await self._outbox.put(json_bytes(message))

    async def _check(self, allowed: Allowed) -> None:
        while True:
            await asyncio.sleep(self._recheck)
            if not await allowed():
                self._end(_Closing(CLOSE_SIGNED_OUT, "signed out: sign in again to follow"))
                return

    async def _receive(self) -> None:
        while True:
            message = await self._socket.receive()
            if message["type"] == "websocket.disconnect":
                self._end(None)
                return
            text = message.get("text")
            if text is None:
                await self._reply({"type": "error", "error": "send JSON as text, not binary"})
                continue
            try:
                await self._handle(parse_message(text))
            except BadMessageError as exc:
                await self._reply({"type": "error", "error": str(exc)})

    async def _handle(self, message: Subscribe | Unsubscribe | Ping) -> None:
        if isinstance(message, Ping):
            await self._reply({"type": "pong"})
        elif isinstance(message, Unsubscribe):
            task = self._subscriptions.pop(message.id, None)
            if task is None:
                raise BadMessageError(f"no subscription {message.id!r} on this socket")
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await self._reply({"type": "unsubscribed", "id": message.id})
        else:
            await self._subscribe(message)

    async def _subscribe(self, message: Subscribe) -> None:
        name = message.id
        if name is None:
            self._named += 1
            name = f"s{self._named}"
        if name in self._subscriptions:
            raise BadMessageError(f"subscription {name!r} is already open: unsubscribe it first")
        if len(self._subscriptions) >= SUBSCRIPTIONS_MAX:
            raise BadMessageError(f"at most {SUBSCRIPTIONS_MAX} subscriptions on one socket")
        try:
            found = [await self._scope.find(session_id) for session_id in message.sessions or ()]
            after = message.after
            if after == "now":
                after = await self._ledger.transfer.last_position()
        except SessionNotFoundError as exc:  # the same words for a session not this reader's
            raise BadMessageError(str(exc)) from None
        except LedgerError as exc:
            await self._reply({"type": "error", "id": name, "error": str(exc)})
            return
        sessions = "all" if message.sessions is None else list(message.sessions)
        await self._reply({"type": "subscribed", "id": name, "sessions": sessions, "after": after})
        followed = tuple(found) if message.sessions is not None else None
        task = asyncio.create_task(self._guard(self._follow(name, followed, after)))
        self._subscriptions[name] = task

    async def _follow(self, name: str, sessions: tuple[str, ...] | None, after: int) -> None:
        single = sessions[0] if sessions is not None and len(sessions) == 1 else None
        wanted = frozenset(sessions) if sessions is not None else None
        try:
            events = self._scope.subscribe(after=after, session_id=single)
            async with _closing(events):
                async for record in events:
                    if wanted is not None and record.session_id not in wanted:
                        continue
                    await self._reply(
                        {
                            "type": "event",
                            "id": name,
                            "session": record.session_id,
                            "position": record.position,
                            "event": event_json(record),
                        }
                    )
        except LedgerError as exc:
            await self._reply({"type": "ended", "id": name, "error": str(exc)})
            self._subscriptions.pop(name, None)


@contextlib.asynccontextmanager
async def _closing(events: AsyncIterator[Any]) -> AsyncIterator[AsyncIterator[Any]]:
    """``events``, closed on the way out (releasing a listening connection on PostgreSQL)."""
    try:
        yield events
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            with contextlib.suppress(LedgerError, RuntimeError):
                await close()


__all__ = [
    "CLOSE_FAILED",
    "CLOSE_SIGNED_OUT",
    "CLOSE_TOO_SLOW",
    "OUTBOX_BYTES",
    "STALL_SECONDS",
    "SUBSCRIPTIONS_MAX",
    "LiveSocket",
]
