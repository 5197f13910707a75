"""Origins and loopback names: one reading for ``ui`` and ``serve --http``.

A browser sends ``Origin`` as ``scheme://host[:port]``: lower case, no path, the scheme's
default port left out, an IPv6 address in brackets. An origin a person allows is compared with
that header as text, so it is read once, here, into the same form.
"""

import ipaddress
from urllib.parse import urlsplit

from thoughtledger.ledger.errors import InvalidInputError

ANY_PORT = ":*"
"""Written after a host, stands for every port of it (the MCP SDK's origin check reads it)."""

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
"""The loopback names: where a server speaking plain HTTP listens, and whom it trusts as local."""

_DEFAULT_PORTS = {"http": 80, "https": 443}


def own_origin(host: str, port: int) -> str:
    """The origin of the server at ``host:port`` (``http://127.0.0.1:8765``)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def parse_origin(text: str, *, any_port: bool = False) -> str:
    """Return ``text`` as a browser writes an origin: ``scheme://host[:port]``, lowercase.

    Args:
        text: An origin to allow, as typed (``http://localhost:3000``, ``https://Example.com/``).
        any_port: Whether ``scheme://host:*`` (every port of the host) may be given.

    Raises:
        InvalidInputError: It is not an ``http`` or ``https`` origin (a path, a query, a user,
            a ``*`` host, a port out of range, or no host), or names every port where
            ``any_port`` is false.
    """
    shown = ascii(text[:100])
    stripped = text.strip()
    every_port = stripped.endswith(ANY_PORT)
    if every_port and not any_port:
        raise InvalidInputError(f"{shown} is not an origin: name one port (scheme://host:port)")
    try:
        parts = urlsplit(stripped[: -len(ANY_PORT)] if every_port else stripped)
        port = parts.port
    except ValueError:
        raise InvalidInputError(f"{shown} is not an origin (scheme://host[:port])") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or "*" in parts.netloc:
        raise InvalidInputError(f"{shown} is not an origin: give http://host[:port] or https://…")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise InvalidInputError(f"{shown} is not an origin: only scheme://host[:port], no path")
    if every_port and port is not None:
        raise InvalidInputError(f"{shown} is not an origin: a port, or :* for any, not both")
    host = parts.hostname.lower()
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:
        pass  # a name, not an address
    if every_port:
        return f"{scheme}://{host}{ANY_PORT}"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"  # browsers leave a default port out of Origin
    return f"{scheme}://{host}:{port}"


__all__ = ["ANY_PORT", "LOOPBACK_HOSTS", "own_origin", "parse_origin"]
