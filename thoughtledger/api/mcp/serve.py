"""``thoughtledger serve``: the entry point MCP clients start (stdio) or connect to (HTTP).

The command line is wired elsewhere; this module gives it two functions:
:func:`add_serve_arguments` and :func:`run_serve`, and takes from it, as :class:`ServeParts`, what
the server uses of the other ways in and out (who a bearer token stands for, the live OTLP
stream, the language model that writes ``sequential_thinking_external``'s thoughts): the command
line is the one place they are put together. Logging is configured here, once, to stderr: on
stdio, stdout carries JSON-RPC and nothing else.
"""

import argparse
import contextlib
import functools
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from starlette.middleware import Middleware
from starlette.routing import WebSocketRoute
from starlette.types import ASGIApp

from thoughtledger.api import (
    READ_URL_ENV,
    Ledger,
    SessionIdRedaction,
    event_line,
    open_ledger,
    resolve_url,
    route_to_stdlib,
)
from thoughtledger.api.mcp.context import AppState, ProfileName
from thoughtledger.api.mcp.origins import own_origin, transport_security
from thoughtledger.api.mcp.render import ThoughtSink, thought_logging_enabled
from thoughtledger.api.mcp.resource_metadata import metadata_routes
from thoughtledger.api.mcp.serve_auth import HttpAuth, IssuerVerifierFactory, http_auth
from thoughtledger.api.mcp.serve_options import (
    DEFAULT_HOST,
    DEFAULT_MAX_HTTP_SESSIONS,
    DEFAULT_PORT,
    HTTP_ONLY_OPTIONS,
    add_serve_arguments,
)
from thoughtledger.api.mcp.server import (
    WriterFactory,
    create_server,
)
from thoughtledger.api.mcp.session_cap import SessionCap
from thoughtledger.api.mcp.stdio import run_stdio, stdio_transport
from thoughtledger.api.mcp.stopping import signals_handled
from thoughtledger.api.mcp.stream_recheck import StreamRecheck
from thoughtledger.ledger.errors import InvalidInputError, LedgerError
from thoughtledger.ledger.masking import mask_text, mask_url
from thoughtledger.ledger.printable import visible

if TYPE_CHECKING:
    from thoughtledger.api import CheckpointWriter, Signer

PROG = "thoughtledger"
EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130
HTTP_PATH = "/mcp"
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

# The server's own lifecycle lines use the standard library: structlog is imported only when
# something else logs (see thoughtledger.api.facade.logs).
_log = logging.getLogger(__name__)


class LiveExport(Protocol):
    """A live OTLP stream's tally, logged when the server stops."""

    @property
    def sent(self) -> int:
        """Spans sent."""
        ...

    @property
    def dropped(self) -> int:
        """Spans dropped (the endpoint failed or could not keep up)."""
        ...


LiveSocketFactory = Callable[[Ledger, TokenVerifier | None, Sequence[str]], ASGIApp]
"""Makes the live socket's app from the ledger, the bearer verifier and the allowed origins."""


@dataclass(frozen=True)
class ServeParts:
    """What the server uses of the other ways in and out, passed in by whoever starts it.

    Attributes:
        token_verifier: Given ``--auth FILE``, who each bearer token stands for (the MCP SDK's
            ``TokenVerifier``); raises ``OSError`` or ``LedgerError`` for a file it cannot use.
        live_telemetry: Given the ledger and ``--otlp URL``, a context that streams every
            recorded thought there as spans while the server runs.
        model_writer: Opens the model client that writes ``use_llm`` thoughts, one per
            lifespan, closed when it ends (``LLMWriter``: configured from the environment, read
            afresh at each call).
        issuer_verifier: Given ``--auth-issuer URL``, makes the verifier of that OAuth issuer's
            JWT access tokens (``IssuerTokenVerifier``); ``None``: the option is refused.
        live_socket: Given the ledger, the bearer verifier (``None``: no authentication) and
            the origins allowed besides the server's own, the live socket's ASGI app, served
            at :data:`WS_PATH` (the browser view's); ``None``: no socket.
    """

    token_verifier: Callable[[Path], TokenVerifier]
    live_telemetry: Callable[[Ledger, str], contextlib.AbstractAsyncContextManager[LiveExport]]
    model_writer: WriterFactory
    issuer_verifier: IssuerVerifierFactory | None = None
    live_socket: LiveSocketFactory | None = None


def _event(level: int, event: str, **facts: object) -> None:
    _log.log(level, "%s", event_line(event, facts))


def _upgrade_logged(description: str, done: int, total: int) -> None:
    # A server's stderr is a log, not a terminal: a long upgrade says when it starts and ends.
    if done == 0:
        _event(logging.INFO, "schema_upgrade_started", doing=description, events=total)
    elif done == total:
        _event(logging.INFO, "schema_upgrade_done", doing=description, events=total)


def run_serve(args: argparse.Namespace, parts: ServeParts) -> int:
    """Serve until stdin closes (stdio) or a signal stops the HTTP server; return an exit code.

    Failures are one line on stderr, as every ``thoughtledger`` command writes them:
    ``thoughtledger: error: ...``, with any password in the ledger URL masked.

    Args:
        args: The options :func:`add_serve_arguments` parsed.
        parts: The token verifier and the live telemetry, from the other adapters.

    Returns:
        0 after a clean stop (stdin closed, or SIGTERM on HTTP); 2 for a ledger URL of no known
        form, HTTP options without ``--http``, issuer options without ``--auth-issuer`` or an
        issuer URL keys may not be fetched from; 1 when the ledger cannot be opened or fails,
        the token file cannot be read or others could change it, the issuer's keys cannot be
        fetched, or the port cannot be bound; 130 after Ctrl-C, which stops either transport
        at once.
    """
    if not args.http and (option := _http_only_option(args)) is not None:
        return _fail(
            f"{option} applies to --http only (stdio has one client: its parent)", EXIT_USAGE
        )
    args.read_url = args.read_url or os.environ.get(READ_URL_ENV) or None
    if args.http:  # unset so that giving them without --http can be told apart
        args.host = args.host or DEFAULT_HOST
        args.port = DEFAULT_PORT if args.port is None else args.port
    configure_logging()
    sink: ThoughtSink | None = _stderr_sink if thought_logging_enabled() else None
    minutes: float = args.ttl_minutes
    ttl = timedelta(minutes=minutes) if minutes > 0 else None
    serve = _serve_http if args.http else _serve_stdio
    try:
        signer = _checkpoint_signer(args)
    except InvalidInputError as exc:
        return _fail(str(exc), EXIT_USAGE)
    try:
        code: int = anyio.run(
            functools.partial(serve, args, parts, ttl=ttl, sink=sink, signer=signer)
        )
    except InvalidInputError as exc:  # a URL of no known form: the command line was wrong
        return _fail(_masked(str(exc), args), EXIT_USAGE)
    except (LedgerError, OSError) as exc:  # a ledger that cannot be opened, a port in use
        return _fail(_masked(str(exc), args), EXIT_FAILURE)
    except KeyboardInterrupt:  # Ctrl-C before the server took over its signals
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:
        # Whatever is left of the exit, a second Ctrl-C ends it without a traceback.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        return _fail("interrupted", EXIT_INTERRUPTED)
    return code


def _masked(message: str, args: argparse.Namespace) -> str:
    """``message`` with the secrets of the ledger's URL and of the read URL masked."""
    return mask_text(mask_text(message, resolve_url(args.db)), args.read_url)


def _opened(
    args: argparse.Namespace, ttl: timedelta | None
) -> contextlib.AbstractAsyncContextManager[Ledger]:
    """The ledger ``--db`` names, reading on ``--read-url``'s standby when one is given."""
    return open_ledger(args.db, ttl=ttl, progress=_upgrade_logged, read_url=args.read_url)


def _http_only_option(args: argparse.Namespace) -> str | None:
    """The first option given that only the HTTP server takes, if any."""
    for option, value in HTTP_ONLY_OPTIONS.items():
        if getattr(args, value) is not None:
            return option
    return None


def _fail(message: str, code: int) -> int:
    lines = message.strip().splitlines()
    first = visible(lines[0], one_line=True) if lines else "failed"  # it may quote a client
    sys.stderr.write(f"{PROG}: error: {first}\n")
    sys.stderr.flush()
    return code


def _checkpoint_signer(args: argparse.Namespace) -> "Signer | None":
    """The key ``--checkpoint-key`` names, when ``--checkpoint-dir`` asks for checkpoints.

    Raises:
        InvalidInputError: One option without the other, or a key that cannot be read.
    """
    from thoughtledger.api import Signer

    if (args.checkpoint_dir is None) != (args.checkpoint_key is None):
        raise InvalidInputError("--checkpoint-dir and --checkpoint-key go together")
    if args.checkpoint_key is None:
        return None
    try:
        return Signer.parse(Path(args.checkpoint_key).read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {args.checkpoint_key}: {exc}") from exc
    except InvalidInputError as exc:
        raise InvalidInputError(f"{args.checkpoint_key}: {exc}") from exc


def _checkpoints(
    ledger: Ledger, args: argparse.Namespace, signer: "Signer | None"
) -> "CheckpointWriter | None":
    from thoughtledger.api import CheckpointWriter

    if signer is None:
        return None
    return CheckpointWriter(ledger.proofs, signer, Path(args.checkpoint_dir), args.checkpoint_every)


async def _serve_stdio(
    args: argparse.Namespace,
    parts: ServeParts,
    *,
    ttl: timedelta | None,
    sink: ThoughtSink | None,
    signer: "Signer | None" = None,
) -> int:
    from thoughtledger.api import checkpoints_kept

    async with (
        _opened(args, ttl) as ledger,
        _telemetry(parts, ledger, args.otlp),
        checkpoints_kept(_checkpoints(ledger, args, signer)),
    ):
        server = _server(ledger, args, parts, sink, transport="stdio")
        with anyio.CancelScope() as serving:
            async with signals_handled(serving.cancel):
                _event(logging.INFO, "serving_stdio", stdio=stdio_transport(), **_facts(args))
                await run_stdio(server)
        if serving.cancelled_caught:
            return EXIT_INTERRUPTED
        _event(logging.INFO, "stdin_closed")
        return 0


async def _serve_http(
    args: argparse.Namespace,
    parts: ServeParts,
    *,
    ttl: timedelta | None,
    sink: ThoughtSink | None,
    signer: "Signer | None" = None,
) -> int:
    from thoughtledger.api import checkpoints_kept

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
        async with (
            _opened(args, ttl) as ledger,
            _telemetry(parts, ledger, args.otlp),
            checkpoints_kept(_checkpoints(ledger, args, signer)),
        ):
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
    from thoughtledger.api.mcp.hardened import BODY_TIMEOUT, HEADER_TIMEOUT, Bounds, hardened_server

    port = listener.getsockname()[1]
    url = own_origin(args.host, port) + HTTP_PATH
    verifier = auth.verifier if auth is not None else None
    server = _server(
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
    if parts.live_socket is not None:
        socket_app = parts.live_socket(ledger, verifier, args.allow_origin or ())
        app.router.routes.append(WebSocketRoute(WS_PATH, socket_app))
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
        _event(
            logging.INFO,
            "serving_http",
            url=url,
            **(auth.facts() if auth is not None else {"auth": "none"}),
            max_http_sessions=per_principal,
            header_timeout=bounds.header_timeout,
            body_timeout=bounds.body_timeout,
            max_connections=bounds.max_connections,
            **_facts(args),
        )
        await http.serve(sockets=[listener])
    if http.force_exit:
        # uvicorn skips the app's shutdown when forced; run it, so the MCP sessions end
        # before the ledger closes under them.
        await http.lifespan.shutdown()
        return EXIT_INTERRUPTED
    return 0


@contextlib.asynccontextmanager
async def _telemetry(parts: ServeParts, ledger: Ledger, url: str | None) -> AsyncIterator[None]:
    """Stream the ledger's thoughts to ``url`` while serving (nothing without a URL)."""
    if url is None:
        yield
        return
    async with parts.live_telemetry(ledger, url) as live:
        yield
    _event(logging.INFO, "otlp_sent", spans=live.sent, dropped=live.dropped)


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


class _VisibleFormatter(logging.Formatter):
    """Log lines with their control characters shown: a record may quote a client's text."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


def configure_logging(level: int = logging.INFO) -> None:
    """Send every log record (ours, structlog's, the SDK's, uvicorn's) to stderr as one line."""
    handler = logging.StreamHandler(sys.stderr)
    formatter = _VisibleFormatter(
        "%(asctime)s.%(msecs)03dZ [%(levelname)s] %(name)s: %(message)s", "%Y-%m-%dT%H:%M:%S"
    )
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    # The SDK logs each HTTP session's id at INFO; the id is the connection's only credential.
    handler.addFilter(SessionIdRedaction())
    root = logging.getLogger()
    # Ours, before the SDK's basicConfig (a no-op once the root has a handler) can add its own.
    root.handlers[:] = [handler]
    root.setLevel(level)
    route_to_stdlib()


def _stderr_sink(rendered: str) -> None:
    print(rendered, file=sys.stderr, flush=True)


def _server(
    ledger: Ledger,
    args: argparse.Namespace,
    parts: ServeParts,
    sink: ThoughtSink | None,
    *,
    transport: str,
    verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> MCPServer[AppState]:
    """The MCP server as the serve options ask, for either transport."""
    profile: ProfileName = args.profile
    return create_server(
        ledger,
        profile=profile,
        tools=args.tools,
        thought_sink=sink,
        transport=transport,
        open_writer=parts.model_writer,
        descriptions=args.descriptions,
        runs=args.runs,
        token_verifier=verifier,
        auth=auth,
        agent=args.agent,
    )


def _facts(args: argparse.Namespace) -> dict[str, object]:
    return {
        "ledger": mask_url(resolve_url(args.db)),
        **({"reads": mask_url(args.read_url)} if args.read_url else {}),
        "profile": args.profile,
        "tools": ",".join(args.tools),
        "runs": args.runs,
        "ttl_minutes": args.ttl_minutes,
    }


__all__ = ["LiveExport", "ServeParts", "add_serve_arguments", "run_serve"]
