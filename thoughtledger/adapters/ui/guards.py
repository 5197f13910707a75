"""What every request to the web app passes before a route sees it: host, origin, headers.

- :class:`LoopbackOnly`: the ``Host`` must be a loopback name, so a page elsewhere cannot reach
  the app through DNS rebinding.
- :class:`SameOrigin`: a request that carries ``Origin`` (a browser's, from a script or a
  form) must come from the app's own origin, ``http://127.0.0.1:PORT``, ``http://localhost:PORT``
  or ``http://[::1]:PORT``, or one given with ``--allow-origin``: a page served on any other port
  of this machine cannot drive the app. Requests without ``Origin`` (curl, scripts, a browser's
  own navigation) pass.
- Both hold for WebSocket upgrades too (a cross-site page may open a socket to any host; only
  its ``Origin`` gives it away), refused before the socket opens.
- :class:`SecurityHeaders`: the Content-Security-Policy and its companions on every answer.
"""

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from thoughtledger.adapters.common.origins import LOOPBACK_HOSTS

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""No inline script or style, nothing from elsewhere: a thought's text can only ever be text."""

_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_OWN_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    """Answer ``status`` with ``{"error": message}``, to a request or to a WebSocket upgrade.

    An upgrade is refused before it is accepted: with that JSON as an HTTP answer where the
    server offers it (the ``websocket.http.response`` extension), with 403 otherwise.
    """
    if scope["type"] == "websocket":
        if "websocket.http.response" in scope.get("extensions", {}):
            body = _error(status, message).body
            head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
            await send({"type": "websocket.http.response.start", "status": status, "headers": head})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})
        return
    await _error(status, message)(scope, receive, send)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


class LoopbackOnly:
    """Refuses a request whose Host is not a loopback name (a DNS-rebinding page's would not be)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 421 unless the Host names a loopback address; else pass the request on."""
        if scope["type"] in ("http", "websocket"):
            host = _header(scope, b"host") or ""
            try:
                name = urlsplit(f"//{host}").hostname
            except ValueError:  # a malformed Host (an unclosed "[")
                name = None
            if name not in LOOPBACK_HOSTS:
                message = "this app answers only on a loopback address"
                await refuse(scope, receive, send, 421, message)
                return
        await self.app(scope, receive, send)


class SameOrigin:
    """Refuses a request whose ``Origin`` is neither the app's own nor one allowed.

    The app's own origins are worked out from the port the request arrived on, so they hold
    for ``--port 0`` too.

    Args:
        app: The app behind.
        allowed: More origins to accept, as
            :func:`thoughtledger.adapters.common.origins.parse_origin` writes them.
    """

    def __init__(self, app: ASGIApp, allowed: Iterable[str] = ()) -> None:
        self.app = app
        self._allowed = frozenset(allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 403 for a foreign ``Origin``; else pass the request on."""
        # A WebSocket too: a browser lets any page open one anywhere (no CORS), sending its
        # Origin, which is the only sign of a page elsewhere riding the user's cookie.
        if scope["type"] in ("http", "websocket"):
            origin = _header(scope, b"origin")
            if origin is not None and not self._accepts(origin, scope):
                message = (
                    f"origin {origin[:100]!a} may not use this app: only its own pages "
                    "may (thoughtledger ui --allow-origin ORIGIN adds another)"
                )
                await refuse(scope, receive, send, 403, message)
                return
        await self.app(scope, receive, send)

    def _accepts(self, origin: str, scope: Scope) -> bool:
        given = origin.strip().lower().rstrip("/")
        if given in self._allowed:
            return True
        scheme_host, _, port_given = given.rpartition(":")
        if port_given.isdigit() and f"{scheme_host}:*" in self._allowed:
            return True  # serve --allow-origin http://localhost:* (any port of that host)
        server = scope.get("server")
        port = server[1] if server else None
        return port is not None and given in {f"http://{host}:{port}" for host in _OWN_HOSTS}


class SecurityHeaders:
    """Adds the security headers to every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, adding the headers to its answer."""

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in _HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)


__all__ = ["CSP", "LoopbackOnly", "SameOrigin", "SecurityHeaders", "refuse"]
