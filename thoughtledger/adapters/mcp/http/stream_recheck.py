"""Ends a long-lived response whose bearer token stopped being good (revoked, expired).

The SDK checks a request's token once, when it arrives. A handshake-era client keeps a ``GET``
on the MCP endpoint open for as long as its session lives, for the server's messages, so a
token revoked with ``thoughtledger token revoke`` (or a JWT past its ``exp``) would go on
receiving them. This ASGI wrapper asks the verifier again every ``every`` seconds while such a
stream is open, and ends the stream when the answer is no. ``POST`` responses are left alone:
each carries one request, which ends by itself, and cutting a tool call halfway would leave its
work half done.
"""

import logging
import time

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import TokenVerifier
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from thoughtledger.adapters.common.logs import event_line

DEFAULT_EVERY = 1.0
"""Seconds between checks of an open stream's token: a revoked stream ends within about that."""

_log = logging.getLogger(__name__)


class StreamRecheck:
    """ASGI middleware: a ``GET`` stream on ``path`` lasts only while its token verifies."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        verifier: TokenVerifier,
        path: str = "/mcp",
        every: float = DEFAULT_EVERY,
    ) -> None:
        """Wrap ``app`` (inside the SDK's authentication middleware, which sets the user).

        Args:
            app: The MCP application.
            verifier: The verifier the SDK's middleware uses, asked again while a stream is open.
            path: The MCP endpoint; other paths pass through untouched.
            every: Seconds between two checks.
        """
        self.app = app
        self.verifier = verifier
        self.path = path.rstrip("/")
        self.every = every

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI event; watch the token of a ``GET`` on the MCP endpoint."""
        user = scope.get("user")
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or scope["path"].rstrip("/") != self.path
            or not isinstance(user, AuthenticatedUser)
        ):
            await self.app(scope, receive, send)
            return
        started = finished = refused = False

        async def tracked(message: Message) -> None:
            nonlocal started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                finished = True
            await send(message)

        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal refused
                while not refused:
                    await anyio.sleep(self.every)
                    refused = not await self._still_good(user)
                group.cancel_scope.cancel()

            group.start_soon(watch)
            await self.app(scope, receive, tracked)
            group.cancel_scope.cancel()
        if refused:
            token = user.access_token
            facts = {"principal": repr(token.subject or token.client_id), "reason": "token refused"}
            _log.info("%s", event_line("stream_ended", facts))
            if started and not finished:
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _still_good(self, user: AuthenticatedUser) -> bool:
        token = user.access_token
        if token.expires_at is not None and token.expires_at < time.time():
            return False
        return await self.verifier.verify_token(token.token) is not None


__all__ = ["DEFAULT_EVERY", "StreamRecheck"]
