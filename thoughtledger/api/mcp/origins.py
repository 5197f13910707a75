"""Which web pages may call the HTTP server: its own origin, and those ``--allow-origin`` names.

A browser sends ``Origin`` with every request a page's script makes. The SDK's default lets any
loopback origin in, whatever its port, so any page served on this machine (a dev server, a
notebook, another program's UI) could drive the server through the user's browser: without
``--auth`` that is every session. So only the server's own origin passes, plus the origins the
user names; a request without ``Origin`` (an MCP client, curl: not a browser) is unaffected.
The ``Host`` check against DNS rebinding stays the SDK's (the loopback names only).
"""

import argparse
from collections.abc import Sequence
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings

LOOPBACK_HOST_PATTERNS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
"""The ``Host`` values the SDK accepts on loopback (any port): a rebound name is refused."""


def own_origin(host: str, port: int) -> str:
    """The origin of the server at ``host:port`` (``http://127.0.0.1:8765``)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def transport_security(host: str, port: int, allowed: Sequence[str]) -> TransportSecuritySettings:
    """The SDK's request checks: loopback ``Host`` only; ``Origin`` absent, ours or ``allowed``."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(LOOPBACK_HOST_PATTERNS),
        allowed_origins=[own_origin(host, port), *allowed],
    )


def origin_option(value: str) -> str:
    """Parse an ``--allow-origin`` value: ``scheme://host[:port]``, or ``:*`` for any port.

    Returned lower-cased and without a trailing slash, as browsers send it.

    Raises:
        argparse.ArgumentTypeError: It is not an ``http`` or ``https`` origin (a path, a query,
            a user name or a ``*`` host is not part of one).
    """
    text = value.strip().rstrip("/").lower()
    any_port = text.endswith(":*")
    parts = urlsplit(text[:-2] if any_port else text)
    try:
        port_ok = any_port or parts.port is not None or ":" not in parts.netloc.rsplit("]", 1)[-1]
    except ValueError:
        port_ok = False
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or "*" in parts.netloc
        or parts.username is not None
        or parts.path
        or parts.query
        or parts.fragment
        or not port_ok
    ):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an origin: use scheme://host[:port], such as "
            "http://localhost:3000 (or http://localhost:* for any port)"
        )
    return text


__all__ = ["LOOPBACK_HOST_PATTERNS", "origin_option", "own_origin", "transport_security"]
