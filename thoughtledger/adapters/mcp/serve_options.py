"""The options of ``thoughtledger serve``, and the checks of their values (one-line errors).

Kept apart from :mod:`thoughtledger.adapters.mcp.serve`, which reads them back, so that the server's
entry point holds only what serving does.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path

from thoughtledger.adapters.common.hardened import BODY_TIMEOUT, HEADER_TIMEOUT
from thoughtledger.adapters.common.options import DEFAULT_HOST as SHARED_HOST
from thoughtledger.adapters.common.options import (
    DEFAULT_MCP_PORT,
    add_issuer_options,
    bounded,
    loopback_host,
    port_number,
)
from thoughtledger.adapters.common.origins import LOOPBACK_HOSTS, parse_origin
from thoughtledger.adapters.common.shares import LIVE_PER_PRINCIPAL
from thoughtledger.adapters.mcp.server import (
    DEFAULT_TOOLS,
    DESCRIPTIONS,
    PROFILES,
    RUNS,
    TOOL_NAMES,
)
from thoughtledger.api import DEFAULT_TTL, READ_URL_ENV, InvalidInputError, check_agent

DEFAULT_HOST = SHARED_HOST
DEFAULT_PORT = DEFAULT_MCP_PORT
DEFAULT_MAX_HTTP_SESSIONS = 32
"""Live MCP HTTP sessions per principal: ample for a few agents and dashboards at once."""
HTTP_ONLY_OPTIONS = {
    "--auth": "auth",
    "--auth-issuer": "auth_issuer",
    "--audience": "audience",
    "--jwks-url": "jwks_url",
    "--role-claim": "role_claim",
    "--map-subject": "map_subject",
    "--allow-origin": "allow_origin",
    "--max-http-sessions": "max_http_sessions",
    "--max-live": "max_live",
    "--max-live-total": "max_live_total",
    "--header-timeout": "header_timeout",
    "--body-timeout": "body_timeout",
    "--host": "host",
    "--port": "port",
}
"""The options only the HTTP server takes, and their names among the parsed arguments."""


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the serve options to ``parser``.

    ``--db``, ``--read-url``, ``--http``, the HTTP server's authentication (``--auth``, and
    the issuer's options: see :func:`.add_issuer_options`), ``--allow-origin``,
    ``--max-http-sessions``, ``--header-timeout``, ``--body-timeout``, ``--host``, ``--port``,
    ``--agent``, ``--profile``, ``--tools``, ``--descriptions``, ``--ttl-minutes`` and the
    checkpoint and OTLP options; :func:`.run_serve` reads them back.
    """
    parser.add_argument(
        "--db",
        metavar="URL",
        help="ledger URL: sqlite:///path.db, postgresql://user@host/db or memory:// "
        "(default: $THOUGHTLEDGER_URL, else a SQLite file in your data directory); a URL with "
        "a password belongs in $THOUGHTLEDGER_URL, since ps shows every user this option",
    )
    parser.add_argument(
        "--read-url",
        metavar="URL",
        help="a hot standby of the PostgreSQL ledger's server: thinking_history, "
        "thinking_insights and the resources are read there, thoughts are written to --db, "
        f"and each thought is read back at once, even before the standby replays it "
        f"(default: ${READ_URL_ENV})",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve streamable HTTP on a loopback address instead of stdio",
    )
    parser.add_argument(
        "--auth",
        type=Path,
        metavar="FILE",
        help="with --http: accept only bearer tokens in this token file (thoughtledger token "
        "add NAME makes one); each token's principal sees only its own sessions",
    )
    add_issuer_options(parser)
    parser.add_argument(
        "--allow-origin",
        action="append",
        type=_origin,
        metavar="ORIGIN",
        help="with --http: also answer requests from web pages of this origin "
        "(scheme://host:port; repeatable); without it, only pages of the server's own origin "
        "may call it (clients that send no Origin, as MCP clients, are not affected)",
    )
    parser.add_argument(
        "--max-http-sessions",
        type=_sessions,
        metavar="N",
        help=f"with --http: live MCP sessions each principal may hold; more get HTTP 429 until "
        f"one ends or idles out (default: {DEFAULT_MAX_HTTP_SESSIONS})",
    )
    parser.add_argument(
        "--max-live",
        type=_count,
        metavar="N",
        help=f"with --http: live sockets (/ws) each principal may hold open; one more gets "
        f"HTTP 429 (default: {LIVE_PER_PRINCIPAL})",
    )
    parser.add_argument(
        "--max-live-total",
        type=_count,
        metavar="N",
        help="with --http: live sockets every principal together may hold open; when full, the "
        "principal holding the most gives up its oldest, or the newcomer gets 429 (default: "
        "half the connections the server accepts)",
    )
    parser.add_argument(
        "--header-timeout",
        type=_seconds,
        metavar="SECONDS",
        help=f"with --http: time a client has to send a request's headers, from connecting or "
        f"from the last answer; then 408 and the connection closes (default: {HEADER_TIMEOUT:g})",
    )
    parser.add_argument(
        "--body-timeout",
        type=_seconds,
        metavar="SECONDS",
        help=f"with --http: time a client has to send a request's body once its headers "
        f"arrived; then 408 and the connection closes (default: {BODY_TIMEOUT:g})",
    )
    parser.add_argument(
        "--host",
        type=loopback_host,
        help=f"with --http: address, {', '.join(LOOPBACK_HOSTS)} (default: {DEFAULT_HOST})",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        help=f"with --http: port; 0 picks a free one (default: {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--agent",
        type=_agent,
        metavar="NAME",
        help="the agent of sessions whose calls name none (in _meta, thoughtledger/agent); "
        "with --auth each token's principal is the agent",
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
        "--runs",
        default="separate",
        choices=RUNS,
        help="separate: a plain thought numbered 1 after earlier thoughts on a connection starts "
        "a new session, linked to the one before (one session per run of an agent); continuous: "
        "one accumulating history per connection, as the official server keeps (default: "
        "%(default)s)",
    )
    parser.add_argument(
        "--checkpoint-dir",
        metavar="DIR",
        help="write signed checkpoints of the ledger here as it grows (0700; files 0600); "
        "needs --checkpoint-key. Copy them where the database's owner cannot rewrite them",
    )
    parser.add_argument(
        "--checkpoint-key", metavar="FILE", help="the private key (thoughtledger keygen)"
    )
    parser.add_argument(
        "--checkpoint-every",
        default=1000,
        type=_count,
        metavar="N",
        help="a new checkpoint once the log grew by N events (default: %(default)s); one more "
        "when serving stops",
    )
    parser.add_argument(
        "--ttl-minutes",
        default=DEFAULT_TTL.total_seconds() / 60,
        type=_minutes,
        metavar="MINUTES",
        help="idle time after which a session expires; 0 never expires (default: %(default)g)",
    )
    parser.add_argument(
        "--otlp",
        metavar="URL",
        help="also send each thought, as it is recorded, as an OpenTelemetry span to this "
        "OTLP/HTTP endpoint (needs the otel extra)",
    )


def _agent(value: str) -> str:
    try:
        return check_agent(value)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _sessions(value: str) -> int:
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of sessions >= 1, got {value!r}")
    return count


_minutes = bounded(float, lambda minutes: minutes >= 0, "0 (never) or a positive number of minutes")
_count = bounded(int, lambda count: count >= 1, "a whole number >= 1")
_seconds = bounded(
    float, lambda seconds: 0 < seconds < float("inf"), "a positive number of seconds"
)


def _origin(value: str) -> str:
    """Parse an ``--allow-origin`` value: ``scheme://host[:port]``, or ``:*`` for any port.

    Raises:
        argparse.ArgumentTypeError: It is not an ``http`` or ``https`` origin (see
            :func:`thoughtledger.adapters.common.origins.parse_origin`).
    """
    try:
        return parse_origin(value, any_port=True)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (http://localhost:* allows any port)") from None


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


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_MAX_HTTP_SESSIONS",
    "DEFAULT_PORT",
    "HTTP_ONLY_OPTIONS",
    "add_serve_arguments",
]
