"""Which web pages may call the HTTP server: its own origin, and those ``--allow-origin`` names.

A browser sends ``Origin`` with every request a page's script makes. The SDK's default lets any
loopback origin in, whatever its port, so any page served on this machine (a dev server, a
notebook, another program's UI) could drive the server through the user's browser: without
``--auth`` that is every session. So only the server's own origin passes, plus the origins the
user names; a request without ``Origin`` (an MCP client, curl: not a browser) is unaffected.
The ``Host`` check against DNS rebinding stays the SDK's (the loopback names only).
"""

from collections.abc import Sequence

from mcp.server.transport_security import TransportSecuritySettings

from thoughtledger.adapters.common.origins import LOOPBACK_HOSTS, own_origin

LOOPBACK_HOST_PATTERNS = tuple(
    f"[{host}]:*" if ":" in host else f"{host}:*" for host in LOOPBACK_HOSTS
)
"""The ``Host`` values the SDK accepts on loopback (any port): a rebound name is refused."""


def transport_security(host: str, port: int, allowed: Sequence[str]) -> TransportSecuritySettings:
    """The SDK's request checks: loopback ``Host`` only; ``Origin`` absent, ours or ``allowed``."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(LOOPBACK_HOST_PATTERNS),
        allowed_origins=[own_origin(host, port), *allowed],
    )


__all__ = ["LOOPBACK_HOST_PATTERNS", "transport_security"]
