"""The live socket as an endpoint: for the browser view's app, and for ``serve --http``.

``thoughtledger ui`` routes ``/api/ws`` to :func:`live_endpoint`; ``serve --http`` is handed
:func:`live_socket_app` by the command line (its composition root) and routes ``/ws`` to it,
so that the MCP server imports nothing of the browser view. Either way the socket takes the
same principals as the app around it and keeps the same rules (see
:mod:`thoughtledger.adapters.ui.live_socket`).
"""

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from thoughtledger.adapters.common.shares import REFUSED_STATUS, Limits, ShareRefusedError
from thoughtledger.adapters.ui.door import Door, SignInRequiredError
from thoughtledger.adapters.ui.guards import LoopbackOnly, SameOrigin, refuse
from thoughtledger.adapters.ui.live_socket import STALL_SECONDS, LiveSocket
from thoughtledger.adapters.ui.signin import RECHECK_SECONDS
from thoughtledger.api import Ledger

if TYPE_CHECKING:
    from thoughtledger.adapters.ui.signin import TokenCheck


def live_endpoint(
    ledger: Ledger, door: Door, *, recheck: float, stall: float = STALL_SECONDS
) -> Callable[[WebSocket], Awaitable[None]]:
    """The socket's endpoint: the principal checked at the upgrade, then the socket served.

    An upgrade without a principal the door accepts is refused with 401 (as JSON) before the
    socket opens; one of a principal holding its share of live sockets and streams, with 429
    (see :mod:`thoughtledger.adapters.common.shares`).
    """

    async def endpoint(websocket: WebSocket) -> None:
        try:
            who = await door.principal(websocket)
        except SignInRequiredError as exc:
            await refuse(websocket.scope, websocket.receive, websocket.send, 401, str(exc))
            return
        allowed = door.still_signed_in(websocket)
        live = LiveSocket(ledger, websocket, who, allowed=allowed, recheck=recheck, stall=stall)
        try:
            held = door.live.take(who.name if who is not None else None, on_end=live.push_out)
        except ShareRefusedError as exc:  # this principal's share, never another's
            await refuse(
                websocket.scope, websocket.receive, websocket.send, REFUSED_STATUS, str(exc)
            )
            return
        try:
            await live.run()
        finally:
            held.release()

    return endpoint


def live_socket_app(
    ledger: Ledger,
    verifier: "TokenCheck | None",
    allow_origins: Iterable[str] = (),
    *,
    recheck: float = RECHECK_SECONDS,
    limits: Limits | None = None,
) -> ASGIApp:
    """The live socket alone, as an ASGI app (for ``serve --http``'s ``/ws``).

    Args:
        ledger: The ledger followed.
        verifier: Who a bearer token stands for; ``None``: no authentication (one principal).
        allow_origins: Origins besides the server's own whose pages may open the socket.
        recheck: Seconds between the checks that a socket's token is still good.
        limits: The live sockets each principal, and all, may hold open.

    Returns:
        An app that serves WebSocket upgrades on loopback from the server's own origin (or
            one allowed) and answers anything else 404.
    """
    door = Door(verifier, recheck=recheck, limits=limits)
    endpoint = live_endpoint(ledger, door, recheck=recheck)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await refuse(scope, receive, send, 404, "this is a WebSocket: open it as one")
            return
        await endpoint(WebSocket(scope, receive, send))

    return LoopbackOnly(SameOrigin(app, allow_origins))


__all__ = ["live_endpoint", "live_socket_app"]
