"""uvicorn for ``serve --http`` and ``ui``, bounded against requests that never finish.

uvicorn closes a connection that idles between requests (its keep-alive timeout), but not one
that stops halfway through a request, and that happens before any authentication: 3,000
connections that sent part of their headers were held as long as their clients liked, and under a
limit of 256 open files, 300 of them kept a client with a valid token out. Both servers therefore
run uvicorn's h11 protocol with three bounds (:func:`hardened_server`):

* **Headers** must be complete within :data:`HEADER_TIMEOUT` seconds of the connection opening,
  or of the previous response ending; else ``408`` and the connection is closed.
* **A body** must be complete within :data:`BODY_TIMEOUT` seconds of its headers; else ``408``
  (if no response has begun) and the connection is closed: the application's wait for it ends as
  for a client that left. A body's size is the application's to bound (the MCP SDK answers
  ``413`` over 4 MiB).
* **Connections** are at most :func:`connection_limit` at once, kept below the process's limit of
  open files so that accepting never runs out of descriptors. One more closes the connection that
  has waited longest for a request of its own (half-open, or idle between requests), so clients
  holding connections open cannot keep a client with a request out; only when every connection
  is busy with a request is the new one refused with ``503``.

Each accepted connection also gets TCP_NODELAY, which asyncio leaves off for the sockets of
``socket.create_server`` (see :func:`_no_delay`): else every answer waited 40 ms on the client.

The protocol is pinned to h11 (uvicorn would pick httptools when it is installed): the bounds are
written against h11's protocol, and its parser also bounds a request's headers (16 KiB).

A WebSocket (the live socket, when the caller asks for it) leaves these deadlines at the upgrade,
and the room limit counts it like any connection; its own bounds are a message size
(:data:`WS_MESSAGE_MAX`), pings a client must answer (:data:`WS_PING_SECONDS`), and a send that
waits for the client to drain, so that its pending output stays bounded.
"""

import asyncio
import contextlib
import gc
import os
import socket
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

HEADER_TIMEOUT = 10.0
"""Seconds a client has to send a request's headers (from connecting, or the last response)."""
BODY_TIMEOUT = 30.0
"""Seconds a client has to send a request's body once its headers arrived (4 MiB at 140 KB/s)."""
MAX_CONNECTIONS = 1024
"""Most connections open at once, when the limit of open files allows that many."""
RESERVED_FILES = 64
"""Descriptors kept back from connections: the ledger's files or pool, the event loop, logs."""
ACCEPT_BATCH = 16
"""Connections the event loop accepts at one wake-up, before any of them can make room: well
within :data:`RESERVED_FILES`, so accepting never fails for want of a descriptor (asyncio would
log the failure and stop accepting for a second)."""
LISTEN_QUEUE = 2048
"""Connections the kernel holds for accepting (uvicorn's default backlog)."""


def _closing_answer(status: bytes, text: bytes) -> bytes:
    head = b"HTTP/1.1 %s\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    return head % status + b"content-length: %d\r\n\r\n%s" % (len(text), text)


_TIMED_OUT = _closing_answer(b"408 Request Timeout", b"Request not sent in time")
_REFUSED = _closing_answer(b"503 Service Unavailable", b"Too many connections")


@dataclass(frozen=True)
class Bounds:
    """The bounds one server's connections share.

    Attributes:
        header_timeout: Seconds to send a request's headers.
        body_timeout: Seconds to send its body, from its headers.
        max_connections: Most connections open at once.
    """

    header_timeout: float = HEADER_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    max_connections: int = field(default_factory=lambda: connection_limit())


def connection_limit(files: int | None = None) -> int:
    """:data:`MAX_CONNECTIONS`, or fewer to stay :data:`RESERVED_FILES` below the files limit.

    Args:
        files: The limit of open files; the process's soft limit when ``None``.
    """
    if files is None:
        if sys.platform == "win32":
            return MAX_CONNECTIONS
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return MAX_CONNECTIONS
        files = soft
    return max(1, min(MAX_CONNECTIONS, files - RESERVED_FILES))


def hardened_server(
    app: Any, *, lifespan: str, bounds: Bounds | None = None, websocket: bool = False
) -> "uvicorn.Server":
    """A uvicorn server for ``app`` whose connections keep ``bounds``.

    It leaves SIGINT and SIGTERM to :func:`thoughtledger.adapters.common.stopping.signals_handled`.

    Args:
        app: The ASGI application.
        lifespan: uvicorn's ``lifespan`` setting (``"on"`` or ``"off"``).
        bounds: The timeouts and the connection limit; the defaults when ``None``.
        websocket: Whether to speak WebSocket (``ui``'s live socket): each message from a
            client is at most :data:`WS_MESSAGE_MAX` bytes, and a client that stops answering
            pings is dropped.
    """
    import uvicorn

    from thoughtledger.adapters.common.stopping import http_server

    _redact_uvicorn_lines()

    config = uvicorn.Config(
        app,
        http=_protocol(bounds or Bounds()),
        # Without it an upgrade is refused. The sans-I/O protocol waits for the client to
        # drain before each send, so a socket's pending output stays bounded.
        ws="websockets-sansio" if websocket else "none",
        ws_max_size=WS_MESSAGE_MAX,
        ws_per_message_deflate=False,  # a compressor per socket costs memory; JSON is small
        ws_ping_interval=WS_PING_SECONDS,
        ws_ping_timeout=WS_PING_SECONDS,
        log_config=None,
        access_log=False,
        lifespan=lifespan,  # type: ignore[arg-type]  # checked by uvicorn; a Literal there
        backlog=ACCEPT_BATCH,
    )
    return http_server(config, queue=LISTEN_QUEUE)


async def serve_on(server: "uvicorn.Server", listener: socket.socket) -> None:
    """Serve requests on ``listener`` until ``server`` stops; what was built before is frozen.

    What the process built to get here (modules, classes, schemas, the open ledger) lives as
    long as it does: frozen out of the collector's reach, a full collection walks only what
    requests made, not some 150,000 objects (a fifth of a busy receiver's time went to them).
    """
    gc.freeze()
    await server.serve(sockets=[listener])


def _redact_uvicorn_lines() -> None:
    """Mask tokens in uvicorn's lines.

    uvicorn logs each WebSocket request with its address, query string and all: a client that
    put its token there (refused, but still a good token) must not find it in a log.
    """
    import logging

    from thoughtledger.adapters.common.logs import TokenRedaction

    for name in ("uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(kept, TokenRedaction) for kept in logger.filters):
            logger.addFilter(TokenRedaction())


WS_MESSAGE_MAX = 64 * 1024
"""The largest WebSocket message a client may send (larger: closed with 1009)."""

WS_PING_SECONDS = 20.0
"""Seconds between pings on a socket, and how long a pong may take."""


def _protocol(bounds: Bounds) -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting: dict[Any, None] = {}  # connections awaiting a request, oldest first
    evicted: set[Any] = set()  # closed for room, not yet gone

    class BoundedProtocol(H11Protocol):
        """uvicorn's h11 protocol with a header deadline, a body deadline and a room limit."""

        _deadline: asyncio.TimerHandle | None = None
        _phase = "headers"  # what the clock waits for: headers, body, or nothing (busy)
        _seen: object = None  # the request cycle whose headers arrived last

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            _no_delay(transport)
            super().connection_made(transport)  # type: ignore[arg-type]
            if len(self.connections) - len(evicted) > bounds.max_connections:
                oldest = next(iter(waiting), None)
                if oldest is None:  # every connection is busy with a request: refuse this one
                    self.transport.write(_REFUSED)
                    self.transport.close()
                    return
                # Room for a client that will send a request, from the one that waited longest.
                del waiting[oldest]
                evicted.add(oldest)
                oldest.transport.close()
            self._await_request()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_clock()
            waiting.pop(self, None)
            evicted.discard(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._phase != "upgraded":
                self._follow_request()

        def handle_websocket_upgrade(self, event: Any) -> None:
            # The socket's protocol takes the connection over: this one's clock must not
            # close it (or write a timeout answer into the socket's frames).
            self._stop_clock()
            waiting.pop(self, None)
            self._phase = "upgraded"
            super().handle_websocket_upgrade(event)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.transport.is_closing():
                return
            self._follow_request()  # a pipelined request may have begun
            if self._phase == "busy":
                self._await_request()

        def _await_request(self) -> None:
            self._phase = "headers"
            waiting[self] = None
            self._start_clock(bounds.header_timeout)

        def _follow_request(self) -> None:
            cycle = self.cycle
            if cycle is None:
                return
            if cycle is not self._seen:  # a request's headers arrived
                self._seen = cycle
                waiting.pop(self, None)
                self._stop_clock()
                self._phase = "busy"
                if cycle.more_body:
                    self._phase = "body"
                    self._start_clock(bounds.body_timeout)
            elif self._phase == "body" and not cycle.more_body:
                self._phase = "busy"
                self._stop_clock()

        def _start_clock(self, seconds: float) -> None:
            self._stop_clock()
            self._deadline = self.loop.call_later(seconds, self._expire)

        def _stop_clock(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            waiting.pop(self, None)
            if self.transport.is_closing():
                return
            if self._phase == "headers" or not self.cycle.response_started:
                self.transport.write(_TIMED_OUT)
            self.transport.close()

    return BoundedProtocol


def _no_delay(transport: asyncio.BaseTransport) -> None:
    """Send each answer's segments at once (TCP_NODELAY).

    asyncio sets it only on sockets whose protocol number says TCP, and a socket accepted from
    :func:`bind`'s (``socket.create_server``: protocol 0) does not: an answer's headers and
    body, written apart, then waited on the client's delayed acknowledgement, 40 ms a request.
    """
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):  # a connection already gone: nothing to speed up
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def bind(host: str, port: int) -> socket.socket:
    """Return a listening TCP socket on ``host:port`` (IPv4 or IPv6, as ``host`` says).

    Raises:
        OSError: The address is taken or cannot be bound (the message names it).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:  # the same error, saying which address (the errno alone does not)
        shown = f"[{host}]" if ":" in host else host
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise OSError(exc.errno, f"cannot listen on {shown}:{port}: {reason}") from exc


__all__ = [
    "ACCEPT_BATCH",
    "BODY_TIMEOUT",
    "HEADER_TIMEOUT",
    "LISTEN_QUEUE",
    "MAX_CONNECTIONS",
    "RESERVED_FILES",
    "WS_MESSAGE_MAX",
    "WS_PING_SECONDS",
    "Bounds",
    "bind",
    "connection_limit",
    "hardened_server",
    "serve_on",
]
