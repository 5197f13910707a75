"""The bearer-token verifier of a web door the command line starts (``ui``, ``receive``).

Put together by ``serve --http``'s own :func:`~thoughtledger.adapters.mcp.http.auth.http_auth`:
the token file (``--auth``), an OAuth issuer (``--auth-issuer``), or both, with the issuer's
principals kept apart from the token file's unless mapped on purpose, and the same checks. The
default audience is the door's own address, ``http://HOST:PORT/``.
"""

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.auth.provider import TokenVerifier


async def web_verifier(
    args: argparse.Namespace, file_verifier: "TokenVerifier | None", port: int
) -> "TokenVerifier | None":
    """The token file's verifier, the issuer's, both (either kind accepted), or none.

    Args:
        args: ``--host``, ``--auth`` and the issuer's options.
        file_verifier: The token file's verifier, already made, or ``None``.
        port: The port the door listens on.

    Raises:
        InvalidInputError: Issuer options without ``--auth-issuer``, or an issuer URL keys may
            not be fetched from.
        LedgerError: The issuer's metadata or keys cannot be fetched.
    """
    from thoughtledger.adapters.auth.issuer import IssuerTokenVerifier
    from thoughtledger.adapters.common.origins import own_origin
    from thoughtledger.adapters.mcp.http.auth import http_auth

    own = own_origin(args.host, port) + "/"
    auth = await http_auth(args, file_verifier, IssuerTokenVerifier, base=own, url=own)
    return None if auth is None else auth.verifier


__all__ = ["web_verifier"]
