"""Who may call ``serve --http``: the token file (``--auth``), an OAuth issuer, or both.

The verifiers themselves live in :mod:`thoughtledger.adapters.auth`, which this package does not
import: the command line passes their constructors in (``ServeParts``), and this module puts
them together with the SDK's settings and the RFC 9728 metadata the server publishes.
"""

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from thoughtledger.adapters.common.options import check_issuer_options
from thoughtledger.adapters.mcp.serve_parts import IssuerVerifierFactory
from thoughtledger.ledger.errors import InvalidInputError


class AnyOf:
    """A ``TokenVerifier`` accepting what any of ``verifiers`` accepts, asked in order."""

    def __init__(self, verifiers: Sequence[TokenVerifier]) -> None:
        """Ask ``verifiers`` in this order (the cheap, local token file first)."""
        self.verifiers = tuple(verifiers)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The first verifier's answer that accepts ``token``, else ``None``."""
        for verifier in self.verifiers:
            if (found := await verifier.verify_token(token)) is not None:
                return found
        return None


@dataclass(frozen=True)
class HttpAuth:
    """How the HTTP server authenticates, once its URL is known.

    Attributes:
        verifier: Checks each request's bearer token.
        settings: The SDK's settings (the issuer, the resource URL).
        issuers: The authorization servers the RFC 9728 metadata names (none: token file only).
        token_file: The token file, if tokens come from one (for the start-up line).
    """

    verifier: TokenVerifier
    settings: AuthSettings
    issuers: tuple[str, ...]
    token_file: str | None

    def facts(self) -> dict[str, str]:
        """What the start-up line says of it: the token file (or ``none``), the issuer."""
        shown = {"auth": self.token_file or "none"}
        if self.issuers:
            shown["auth_issuer"] = ",".join(self.issuers)
        return shown


async def http_auth(
    args: argparse.Namespace,
    file_verifier: TokenVerifier | None,
    issuer_verifier: IssuerVerifierFactory | None,
    *,
    base: str,
    url: str,
) -> HttpAuth | None:
    """Put together the authentication ``args`` asks for (``None``: none asked).

    Args:
        args: The issuer's options (see :func:`.add_issuer_options`) and ``--auth``.
        file_verifier: The token file's verifier, already made (``--auth FILE``), or ``None``.
        issuer_verifier: Makes the issuer's verifier; ``None`` where this build has none.
        base: The server's origin (``http://127.0.0.1:8765``).
        url: The MCP endpoint's URL: the resource tokens are for, and the default audience.

    Raises:
        InvalidInputError: Issuer options without ``--auth-issuer``, or a URL keys may not be
            fetched from.
        LedgerError: The issuer's metadata or keys cannot be fetched (``IssuerError``).
    """
    check_issuer_options(args)
    issuer: str | None = args.auth_issuer
    if issuer is None:
        if file_verifier is None:
            return None
        return HttpAuth(file_verifier, _settings(base, url), (), str(args.auth))
    if issuer_verifier is None:
        raise InvalidInputError("--auth-issuer is not available in this build")
    options: dict[str, str] = {} if args.role_claim is None else {"role_claim": args.role_claim}
    # With a token file too, two sources of principals: the issuer's live apart (ISSUER#sub)
    # unless the operator maps a subject to a token file's name on purpose.
    subjects = None if file_verifier is None else dict(args.map_subject or ())
    verifying = issuer_verifier(
        issuer, args.audience or url, jwks_url=args.jwks_url, subjects=subjects, **options
    )
    await verifying.prepare()  # a wrong issuer stops the server now, not at the first client
    if file_verifier is None:
        verifier: TokenVerifier = verifying
        token_file = None
    else:
        verifier, token_file = AnyOf([file_verifier, verifying]), str(args.auth)
    return HttpAuth(verifier, _settings(verifying.issuer, url), (verifying.issuer,), token_file)


def _settings(issuer: str, url: str) -> AuthSettings:
    # The verifiers check each token's audience themselves (the token file's tokens are this
    # server's own, an issuer's are checked against --audience), so the SDK need not.
    return AuthSettings(
        issuer_url=AnyHttpUrl(issuer),
        resource_server_url=AnyHttpUrl(url),
        validate_token_resource=False,
    )


__all__ = [
    "AnyOf",
    "HttpAuth",
    "http_auth",
]
