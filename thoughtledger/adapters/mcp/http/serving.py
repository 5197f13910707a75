"""``thoughtledger serve --http``: the MCP server on a loopback port, until a signal stops it.

The token file is read first, then the port bound, so that ``--port 0`` is known: it is in the
URL bearer tokens are for and in the one origin web pages may call from. The SDK's streamable
HTTP app is then put together with what guards it (Host and Origin checks, the per-principal
session cap, bearer tokens checked again on open streams, the RFC 9728 metadata) and the live
socket, and served by the bounded uvicorn of :mod:`~thoughtledger.adapters.common.hardened`
until SIGTERM (gracefully) or Ctrl-C (at once).
"""

import argparse
import contextlib
import logging
import socket
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from starlette.middleware import Middleware
from starlette.routing import WebSocketRoute

from thoughtledger.adapters.common.hardened import bind
from thoughtledger.adapters.common.origins import own_origin
from thoughtledger.adapters.common.shares import LIVE_PER_PRINCIPAL, Limits
from thoughtledger.adapters.common.stopping import signals_handled
from thoughtledger.adapters.mcp.http.auth import HttpAuth, http_auth
from thoughtledger.adapters.mcp.http.resource_metadata import metadata_routes
from thoughtledger.adapters.mcp.http.session_cap import SessionCap
from thoughtledger.adapters.mcp.http.stream_recheck import StreamRecheck
from thoughtledger.adapters.mcp.http.transport_security import transport_security
from thoughtledger.adapters.mcp.serve_options import DEFAULT_MAX_HTTP_SESSIONS
from thoughtledger.adapters.mcp.serve_parts import (
    EXIT_INTERRUPTED,
    LOGGER,
    ServeParts,
    ledger_served,
    log_event,
    mcp_server,
    serving_facts,
)
from thoughtledger.adapters.mcp.tools.render import ThoughtSink
from thoughtledger.api import Ledger

if TYPE_CHECKING:
    from thoughtledger.api import Signer

HTTP_PATH = "/mcp"
"""Where ``serve --http`` serves MCP (streamable HTTP)."""
WS_PATH = "/ws"
"""Where ``serve --http`` serves the live socket (a WebSocket following the ledger)."""
HTTP_IDLE_TIMEOUT = float(DEFAULT_SESSION_IDLE_TIMEOUT)
"""Seconds an HTTP session may idle before the SDK ends it (the SDK's default, 30 minutes)."""
PRINCIPALS_ROOM = 32
"""With --auth, the SDK's global cap is this many principals at their cap."""
SINGLE_PRINCIPAL_WARNING = (
    "serving without --auth: single-principal, any process on this machine can read and "
    "write every session (use --auth FILE; see: thoughtledger token add --help)"
)

_log = logging.getLogger(LOGGER)


async def serve_http(
    args: argparse.Namespace,
    parts: ServeParts,
    *,
    ttl: timedelta | None,
    sink: ThoughtSink | None,
    signer: "Signer | None" = None,
) -> int:
    """Serve streamable HTTP as ``args`` ask until a signal stops it; return the exit code.

    Args:
        args: The serve options, ``--host`` and ``--port`` given their defaults.
        parts: What the server uses of the other ways in and out.
        ttl: Idle time after which a session expires (``None``: never).
        sink: Where each thought is also written as text (``None``: nowhere).
        signer: The key of the ledger's checkpoints (``None``: none written).

    Returns:
        0 after SIGTERM, once the requests in flight are answered; 130 after Ctrl-C.

    Raises:
        InvalidInputError: A ledger URL of no known form, issuer options without
            ``--auth-issuer``, or an issuer URL keys may not be fetched from.
        LedgerError: The token file cannot be used, the issuer's keys cannot be fetched, or
            the ledger cannot be opened or fails.
        OSError: The token file cannot be read, or the port cannot be bound.
    """
    # The token file first: a bad one stops the server before the ledger is touched.
    file_verifier = parts.token_verifier(Path(args.auth)) if args.auth is not None else None
    per_principal: int = args.max_http_sessions or DEFAULT_MAX_HTTP_SESSIONS
    # Bind next, so --port 0 is known: it is in the URL, the URL is the resource tokens are
    # for, and the port is in the one origin web pages may call from.
    listener = bind(args.host, args.port)
    port = listener.getsockname()[1]
    base = own_origin(args.host, port)
    url = base + HTTP_PATH
    with contextlib.closing(listener):
        auth = await http_auth(args, file_verifier, parts.issuer_verifier, base=base, url=url)
        async with ledger_served(args, parts, ttl, signer) as ledger:
            return await _run_http(ledger, args, parts, sink, listener, auth, per_principal)


async def _run_http(
    ledger: Ledger,
    args: argparse.Namespace,
    parts: ServeParts,
    sink: ThoughtSink | None,
    listener: socket.socket,
    auth: HttpAuth | None,
    per_principal: int,
) -> int:
    """Serve the MCP app on ``listener`` until a signal stops it; return the exit code."""
    from thoughtledger.adapters.common.hardened import (
        BODY_TIMEOUT,
        HEADER_TIMEOUT,
        Bounds,
        hardened_server,
        serve_on,
    )

    port = listener.getsockname()[1]
    url = own_origin(args.host, port) + HTTP_PATH
    verifier = auth.verifier if auth is not None else None
    server = mcp_server(
        ledger,
        args,
        parts,
        sink,
        transport="http",
        verifier=verifier,
        auth=auth.settings if auth is not None else None,
    )
    app = server.streamable_http_app(
        streamable_http_path=HTTP_PATH,
        host=args.host,
        # Loopback Host names only (against DNS rebinding); Origin only ours and --allow-origin.
        transport_security=transport_security(args.host, port, args.allow_origin or ()),
        session_idle_timeout=HTTP_IDLE_TIMEOUT,
        # The SDK's own cap on every session together: room for that many principals.
        max_sessions=per_principal * (PRINCIPALS_ROOM if verifier is not None else 1),
    )
    # Inside the SDK's bearer middleware (appended after it), where scope["user"] is set.
    app.user_middleware.append(
        Middleware(
            SessionCap,
            per_principal=per_principal,
            idle_timeout=HTTP_IDLE_TIMEOUT,
            path=HTTP_PATH,
        )
    )
    if auth is not None:
        app.user_middleware.append(
            Middleware(StreamRecheck, verifier=auth.verifier, path=HTTP_PATH)
        )
        # Ahead of the SDK's own metadata route, which names this server as the issuer.
        app.router.routes[0:0] = metadata_routes(url, auth.issuers)
    limits = Limits(
        live=args.max_live or LIVE_PER_PRINCIPAL,
        live_total=args.max_live_total,
    )
    shares = limits.live_shares()  # as the socket's door makes them: for the start-up line
    if parts.live_socket is not None:
        socket_app = parts.live_socket(ledger, verifier, args.allow_origin or (), limits=limits)
        app.router.routes.append(WebSocketRoute(WS_PATH, socket_app))
    if parts.otlp_receiver is not None:
        # OTLP senders post here with the same tokens; the routes check them themselves.
        app.router.routes.extend(parts.otlp_receiver(ledger, verifier, args.allow_origin or ()))
    bounds = Bounds(
        header_timeout=args.header_timeout or HEADER_TIMEOUT,
        body_timeout=args.body_timeout or BODY_TIMEOUT,
    )
    http = hardened_server(
        app, lifespan="on", bounds=bounds, websocket=parts.live_socket is not None
    )

    def stop_now() -> None:  # Ctrl-C: drop open streams rather than wait for them
        http.should_exit = http.force_exit = True

    def stop() -> None:  # SIGTERM: finish what is in flight, then stop
        http.should_exit = True

    # Signals are ours before the URL is out: a client may act on the line at once.
    async with signals_handled(stop_now, on_term=stop):
        if verifier is None:
            _log.warning("%s", SINGLE_PRINCIPAL_WARNING)
        log_event(
            logging.INFO,
            "serving_http",
            url=url,
            **(auth.facts() if auth is not None else {"auth": "none"}),
            max_http_sessions=per_principal,
            max_live=shares.per_principal,
            max_live_total=shares.total,
            header_timeout=bounds.header_timeout,
            body_timeout=bounds.body_timeout,
            max_connections=bounds.max_connections,
            **serving_facts(args),
        )
        await serve_on(http, listener)
    if http.force_exit:
        # uvicorn skips the app's shutdown when forced; run it, so the MCP sessions end
        # before the ledger closes under them.
        await http.lifespan.shutdown()
        return EXIT_INTERRUPTED
    return 0


__all__ = [
    "HTTP_IDLE_TIMEOUT",
    "HTTP_PATH",
    "SINGLE_PRINCIPAL_WARNING",
    "WS_PATH",
    "serve_http",
]
