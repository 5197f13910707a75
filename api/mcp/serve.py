"""``thoughtledger serve``: the entry point MCP clients start (stdio) or connect to (HTTP).

The command line is wired elsewhere; this module gives it two functions:
:func:`add_serve_arguments` and :func:`run_serve`. Logging is configured here, once, to stderr:
on stdio, stdout carries JSON-RPC and nothing else.
"""

import argparse
import functools
import logging
import signal
import socket
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from types import FrameType
from urllib.parse import urlsplit, urlunsplit

import anyio

from api.bootstrap import open_ledger, resolve_url
from api.logs import event_line, route_to_stdlib
from api.mcp.app import ProfileName
from api.mcp.render import ThoughtSink, thought_logging_enabled
from api.mcp.server import DEFAULT_TOOLS, DESCRIPTIONS, PROFILES, TOOL_NAMES, create_server
from api.mcp.stdio import pipes_usable, run_stdio
from api.service import DEFAULT_TTL
from ledger.errors import LedgerError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
HTTP_PATH = "/mcp"

# The server's own lifecycle lines use the standard library: structlog is imported only when
# something else logs (see api.logs).
_log = logging.getLogger(__name__)


def _event(level: int, event: str, **facts: object) -> None:
    _log.log(level, "%s", event_line(event, facts))


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the serve options to ``parser``.

    ``--db``, ``--http``, ``--host``, ``--port``, ``--profile``, ``--tools``,
    ``--descriptions`` and ``--ttl-minutes``; :func:`run_serve` reads them back.
    """
    parser.add_argument(
        "--db",
        metavar="URL",
        help="ledger URL: sqlite:///path.db, postgresql://user@host/db or memory:// "
        "(default: $THOUGHTLEDGER_URL, else a SQLite file in your data directory)",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve streamable HTTP on a loopback address instead of stdio",
    )
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        type=_loopback,
        help=f"HTTP address: {', '.join(LOOPBACK_HOSTS)} (default: %(default)s)",
    )
    parser.add_argument(
        "--port",
        default=DEFAULT_PORT,
        type=_port,
        help="HTTP port; 0 picks a free one (default: %(default)s)",
    )
    parser.add_argument(
        "--profile",
        default="official",
        choices=PROFILES,
        help="answer of sequentialthinking: minimal (4 keys), official, or full (with history)",
    )
    parser.add_argument(
        "--tools",
        default=list(DEFAULT_TOOLS),
        type=_tool_list,
        metavar="NAMES",
        help=f"comma-separated tools to list, or all (default: {','.join(DEFAULT_TOOLS)}; "
        f"available: {', '.join(TOOL_NAMES)})",
    )
    parser.add_argument(
        "--descriptions",
        default="official",
        choices=DESCRIPTIONS,
        help="tool descriptions: official (the official server's words) or compact (each "
        "within the 1,024 characters OpenAI's API accepts, for OpenAI-backed clients)",
    )
    parser.add_argument(
        "--ttl-minutes",
        default=DEFAULT_TTL.total_seconds() / 60,
        type=_minutes,
        metavar="MINUTES",
        help="idle time after which a session expires; 0 never expires (default: %(default)g)",
    )


def run_serve(args: argparse.Namespace) -> int:
    """Serve until stdin closes (stdio) or a signal stops the HTTP server; return an exit code.

    Returns:
        0 after a clean stop (stdin closed, or SIGTERM on HTTP); 1 when the ledger cannot be
        opened or fails, or the port cannot be bound; 130 after Ctrl-C.
    """
    configure_logging()
    sink: ThoughtSink | None = _stderr_sink if thought_logging_enabled() else None
    minutes: float = args.ttl_minutes
    ttl = timedelta(minutes=minutes) if minutes > 0 else None
    serve = _serve_http if args.http else _serve_stdio
    try:
        anyio.run(functools.partial(serve, args, ttl=ttl, sink=sink))
    except (LedgerError, OSError) as exc:  # a bad ledger, a port in use: one line, exit 1
        _event(logging.ERROR, "serve_failed", error=exc, ledger=_redacted(resolve_url(args.db)))
        return 1
    except KeyboardInterrupt:
        return 130
    except SystemExit:  # SIGTERM on HTTP, after a graceful stop
        return 0
    return 0


async def _serve_stdio(
    args: argparse.Namespace, *, ttl: timedelta | None, sink: ThoughtSink | None
) -> None:
    async with open_ledger(args.db, ttl=ttl) as ledger:
        server = create_server(
            ledger,
            profile=_profile(args),
            tools=args.tools,
            thought_sink=sink,
            transport="stdio",
            descriptions=args.descriptions,
        )
        stdio = "pipes" if pipes_usable() else "sdk"
        _event(logging.INFO, "serving_stdio", stdio=stdio, **_facts(args))
        await run_stdio(server)
        _event(logging.INFO, "stdin_closed")


async def _serve_http(
    args: argparse.Namespace, *, ttl: timedelta | None, sink: ThoughtSink | None
) -> None:
    import uvicorn

    async with open_ledger(args.db, ttl=ttl) as ledger:
        server = create_server(
            ledger,
            profile=_profile(args),
            tools=args.tools,
            thought_sink=sink,
            transport="http",
            descriptions=args.descriptions,
        )
        # host= turns on the SDK's DNS-rebinding protection for loopback names.
        app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=args.host)
        # Bind first, so --port 0 can be logged with the port it got.
        listener = bind(args.host, args.port)
        port = listener.getsockname()[1]
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
        url = f"http://{_url_host(args.host)}:{port}{HTTP_PATH}"
        _event(logging.INFO, "serving_http", url=url, **_facts(args))
        # uvicorn stops gracefully on SIGTERM, then raises it again for the previous handler;
        # the default one would kill the process before the ledger closes. Ours exits cleanly.
        previous = signal.signal(signal.SIGTERM, _exit_cleanly)
        try:
            await uvicorn.Server(config).serve(sockets=[listener])
        finally:
            signal.signal(signal.SIGTERM, previous)


def bind(host: str, port: int) -> socket.socket:
    """Return a listening TCP socket on ``host:port`` (IPv4 or IPv6, as ``host`` says).

    Raises:
        OSError: The address is taken or cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family)


def configure_logging(level: int = logging.INFO) -> None:
    """Send every log record (ours, structlog's, the SDK's, uvicorn's) to stderr as one line."""
    handler = logging.StreamHandler(sys.stderr)
    formatter = logging.Formatter(
        "%(asctime)s.%(msecs)03dZ [%(levelname)s] %(name)s: %(message)s", "%Y-%m-%dT%H:%M:%S"
    )
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    root = logging.getLogger()
    # Ours, before the SDK's basicConfig (a no-op once the root has a handler) can add its own.
    root.handlers[:] = [handler]
    root.setLevel(level)
    route_to_stdlib()


def _exit_cleanly(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)  # unwinds through ``async with open_ledger``, which closes the ledger


def _stderr_sink(rendered: str) -> None:
    print(rendered, file=sys.stderr, flush=True)


def _profile(args: argparse.Namespace) -> ProfileName:
    chosen: ProfileName = args.profile
    return chosen


def _facts(args: argparse.Namespace) -> dict[str, object]:
    return {
        "ledger": _redacted(resolve_url(args.db)),
        "profile": args.profile,
        "tools": ",".join(args.tools),
        "ttl_minutes": args.ttl_minutes,
    }


def _redacted(url: str) -> str:
    # Logs outlive sessions: never write a database password into them.
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
"""The hosts the SDK guards against DNS rebinding; the HTTP server listens on nothing else."""


def _loopback(value: str) -> str:
    # There is no authentication on the HTTP endpoint: it must not be reachable from elsewhere,
    # nor from a web page through DNS rebinding (the SDK checks Host only for these three names).
    if value not in LOOPBACK_HOSTS:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not one of {', '.join(LOOPBACK_HOSTS)}: the HTTP server has no "
            "authentication, so it listens on loopback only (put a proxy in front to share it)"
        )
    return value


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is outside 0-65535")
    return port


def _minutes(value: str) -> float:
    try:
        minutes = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of minutes") from None
    if minutes < 0 or minutes != minutes or minutes == float("inf"):
        raise argparse.ArgumentTypeError("--ttl-minutes must be 0 (never) or a positive number")
    return minutes


def _tool_list(value: str) -> Sequence[str]:
    if value.strip() == "all":
        return list(TOOL_NAMES)
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in TOOL_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown tools {', '.join(unknown) or '(none given)'}: choose from "
            f"{', '.join(TOOL_NAMES)}, or all"
        )
    return names


__all__ = ["add_serve_arguments", "run_serve"]
