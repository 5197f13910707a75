"""A cap on the live MCP HTTP sessions each principal holds (``serve --max-http-sessions N``).

Each handshake-era HTTP client that sends ``initialize`` gets a session the SDK keeps, with its
server task and buffers, until the client ends it (``DELETE``) or it sits idle past the idle
timeout (30 minutes): one caller looping over ``initialize`` could hold hundreds of megabytes.
The SDK caps the total (``max_sessions``); this ASGI wrapper caps each principal, so one caller
at its cap leaves room for the others.

It uses only what crosses the HTTP boundary: a request that opens a session (a ``POST`` without
``mcp-session-id`` and of the handshake era) and the ``mcp-session-id`` its response carries;
the requests each session has in flight and when its last one ended; a ``DELETE`` that
succeeded or a ``404`` (the SDK no longer knows it) forgets it, and so does idling past the
SDK's idle timeout (a request in flight, an open ``GET`` stream included, is never idle: the
SDK's rule too). It sits inside the SDK's bearer middleware, where ``scope["user"]`` already
says who is calling; so every MCP request first waits for its principal's pace there (see
:mod:`thoughtledger.adapters.common.pacing`), refused with 429 when too many already wait.
"""

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from thoughtledger.adapters.common.pacing import Pacing
from thoughtledger.adapters.common.shares import ShareRefusedError

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
REFUSED_STATUS = 429
"""Too Many Requests: this caller, not the server, is over its limit, and it can act on it."""
_SERVER_ERROR = -32000  # JSON-RPC's implementation-defined server error range


@dataclass(slots=True)
class _Live:
    principal: str | None
    in_flight: int
    last_done: float


class SessionCap:
    """ASGI middleware: at most ``per_principal`` live MCP sessions per principal.

    Past the cap, a request that would open another session is answered ``429`` with a
    JSON-RPC error saying what the cap is and how to free a slot; requests on existing
    sessions, and other principals, are unaffected.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        per_principal: int,
        idle_timeout: float | None,
        path: str = "/mcp",
        clock: Callable[[], float] = time.monotonic,
        pacing: Pacing | None = None,
    ) -> None:
        """Wrap ``app``.

        Args:
            app: The MCP application (inside the SDK's authentication middleware).
            per_principal: Live sessions each principal may hold.
            idle_timeout: The idle timeout given to the SDK, in seconds (``None``: never).
            path: The MCP endpoint; other paths pass through untouched.
            clock: Monotonic seconds (the SDK's idle clock is monotonic too).
            pacing: Each principal's pace of requests (``None``: a pace of its own).

        Raises:
            ValueError: ``per_principal`` is below 1.
        """
        if per_principal < 1:
            raise ValueError("per_principal must be at least 1")
        self.app = app
        self.per_principal = per_principal
        self.idle_timeout = idle_timeout
        self.path = path
        self.clock = clock
        self._sessions: dict[str, _Live] = {}
        self._opening: dict[str | None, int] = {}
        self.pacing = pacing if pacing is not None else Pacing()

    def live(self, principal: str | None) -> int:
        """Sessions ``principal`` holds now (``None``: the unauthenticated caller)."""
        self._forget_idle()
        return sum(1 for live in self._sessions.values() if live.principal == principal)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI event: count sessions on the MCP path, pass everything through."""
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path.rstrip("/"):
            await self.app(scope, receive, send)
            return
        try:
            await self.pacing.wait(_principal(scope))  # its own requests wait, never another's
        except ShareRefusedError as exc:
            await _refused(send, str(exc))
            return
        headers = Headers(scope=scope)
        session_id = headers.get(SESSION_HEADER)
        if session_id is not None:
            await self._on_session(session_id, scope, receive, send)
        elif scope["method"] == "POST" and headers.get(VERSION_HEADER) in _HANDSHAKE:
            await self._opening_request(scope, receive, send)
        else:  # a 2026-07-28 request, or one that cannot open a session: nothing to count
            await self.app(scope, receive, send)

    async def _opening_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = _principal(scope)
        # Counted once its body is here: a request sent only in part holds no room meanwhile
        # (else clients that never finish theirs would keep everyone out until they time out).
        receive, gone = await _body_first(receive)
        if gone:  # the client left (or ran out of time) before sending it all: nothing to open
            return
        pending = self._opening.get(principal, 0)
        # Requests still opening count too, so a burst cannot slip past the cap.
        if self.live(principal) + pending >= self.per_principal:
            await self._refuse(principal, send)
            return
        self._opening[principal] = pending + 1
        opened: str | None = None
        settled = False

        def settle() -> None:  # no longer opening: either a live session now, or nothing
            nonlocal settled
            if not settled:
                settled = True
                self._opening[principal] -= 1
                if not self._opening[principal]:
                    del self._opening[principal]

        async def watch(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start":
                if message["status"] < 400:
                    opened = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if opened is not None:
                    self._sessions[opened] = _Live(principal, 1, self.clock())
                settle()  # counted once: as live from here on, or not at all
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            settle()
            if opened is not None:
                self._done(opened)

    async def _on_session(
        self, session_id: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        live = self._sessions.get(session_id)
        if live is not None:
            live.in_flight += 1
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status, live
            if message["type"] == "http.response.start":
                status = message["status"]
                if status == 404:  # the SDK no longer knows it (ended, idle, never existed)
                    self._sessions.pop(session_id, None)
                elif live is None and status < 400:
                    # Forgotten here but alive there (an idle race): count it again.
                    live = self._sessions[session_id] = _Live(_principal(scope), 1, self.clock())
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if live is not None:
                self._done(session_id)
            if scope["method"] == "DELETE" and 200 <= status < 300:
                self._sessions.pop(session_id, None)

    def _done(self, session_id: str) -> None:
        live = self._sessions.get(session_id)
        if live is not None:
            live.in_flight -= 1
            live.last_done = self.clock()

    def _forget_idle(self) -> None:
        if self.idle_timeout is None:
            return
        cutoff = self.clock() - self.idle_timeout
        idle = [
            key
            for key, live in self._sessions.items()
            if live.in_flight <= 0 and live.last_done < cutoff
        ]
        for key in idle:
            del self._sessions[key]

    async def _refuse(self, principal: str | None, send: Send) -> None:
        who = "this server's caller" if principal is None else f"principal {principal!r}"
        wait = self._next_idle_end(principal)
        if wait is None:
            idle_hint = "none of them is idle yet" if self.idle_timeout is not None else ""
        else:
            idle_hint = f"an idle one closes in {math.ceil(wait / 60)} min"
        message = (
            f"{who} already holds {self.per_principal} open MCP sessions, the cap per principal "
            "(serve --max-http-sessions): end one you no longer use with an HTTP DELETE "
            f"carrying its {SESSION_HEADER} header"
            + (
                f", or wait for idle sessions to close after "
                f"{self.idle_timeout / 60:g} minutes ({idle_hint})"
                if self.idle_timeout is not None
                else ""
            )
        )
        await _refused(send, message, math.ceil(wait) if wait is not None else None)

    def _next_idle_end(self, principal: str | None) -> float | None:
        if self.idle_timeout is None:
            return None
        ends = [
            live.last_done + self.idle_timeout
            for live in self._sessions.values()
            if live.principal == principal and live.in_flight <= 0
        ]
        return max(0.0, min(ends) - self.clock()) if ends else None


async def _body_first(receive: Receive) -> tuple[Receive, bool]:
    """Wait for the request's whole body (up to the SDK's cap).

    Past the cap the rest is left to the SDK, which refuses the request.

    Returns:
        A ``receive`` that replays what was read, and whether the client left meanwhile.
    """
    received: list[Message] = []
    size = 0
    while size <= DEFAULT_MAX_REQUEST_BODY_SIZE:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
        size += len(message.get("body", b""))

    async def replayed() -> Message:
        return received.pop(0) if received else await receive()

    return replayed, received[-1]["type"] == "http.disconnect"


_HANDSHAKE = frozenset({None, *HANDSHAKE_PROTOCOL_VERSIONS})
"""``mcp-protocol-version`` values of requests the SDK may open a session for (none at all:
an ``initialize``)."""


async def _refused(send: Send, message: str, retry_after: int | None = None) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": _SERVER_ERROR, "message": message}}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": REFUSED_STATUS, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _principal(scope: Scope) -> str | None:
    # Set by the SDK's AuthenticationMiddleware, which runs before this wrapper.
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        token = user.access_token
        return (
            token.subject or token.client_id
        )  # as thoughtledger.adapters.mcp.tools.context.principal_of_request
    return None


__all__ = ["REFUSED_STATUS", "SessionCap"]
