"""``IssuerTokenVerifier``: the SDK's ``TokenVerifier`` for JWT access tokens of an OAuth issuer.

A team's identity provider (Keycloak, Entra ID, Auth0, Okta, Dex...) issues the tokens; the
server checks each one itself, with PyJWT, against the issuer's published keys (see
:mod:`~thoughtledger.adapters.auth.jwks`):

- the signature, with an algorithm from an allow-list of public-key algorithms that must also
  fit the key (``none`` and the HMAC family are never accepted: a public key used as an HMAC
  secret would let anyone sign);
- ``iss`` is the issuer, ``aud`` holds the audience (RFC 8707: the resource the token was asked
  for, by default the served ``/mcp`` URL);
- ``exp`` is present and not past, to the second and with no leeway, the rule the SDK holds
  ``/mcp`` to (given it as ``expires_at``): so every door (``/mcp``, ``/ws``, the browser
  view) refuses a token from the same second on; ``nbf`` and ``iat``, when present, are not in
  the future, with a small leeway for clocks that differ;
- ``sub`` names the principal: its sessions are its own. Where a server takes a token file's
  tokens too, the issuer's principals live in a namespace of their own (``ISSUER#sub``: an
  issuer has no fragment, and a token file's names hold no ``/`` or ``#``), so a JWT whose
  ``sub`` is ``alice`` is never the token file's ``alice``, unless the operator maps that
  subject to that name on purpose (``--map-subject alice=alice``).

The role comes from a claim (``thoughtledger_role`` unless told otherwise) holding ``writer``,
``reader`` or ``auditor`` (or a list of them: the widest wins); without that claim, from the
token's scopes as for every OAuth token (``thoughtledger:auditor``...; none: ``writer``). A role
claim with no role in it refuses the token rather than guess. Tokens never reach a log: a
refusal logs only why.
"""

import logging
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import jwt
from mcp.server.auth.provider import AccessToken

from thoughtledger.adapters.auth.jwks import FETCH_TIMEOUT, KeySet
from thoughtledger.adapters.common.logs import event_line
from thoughtledger.api import ROLES, SCOPE_PREFIX, role_of
from thoughtledger.ledger.errors import InvalidInputError

ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""Signature algorithms accepted: public-key ones only."""
DEFAULT_ROLE_CLAIM = "thoughtledger_role"
LEEWAY = 30.0
"""Seconds of clock difference forgiven on ``nbf`` and ``iat``."""
MAX_SUBJECT = 256
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}

_log = logging.getLogger(__name__)


class IssuerTokenVerifier:
    """Verifies JWT access tokens an OAuth issuer signed for this server's audience.

    A good token becomes ``AccessToken(subject=<sub>, client_id=<client_id, azp or sub>,
    scopes=["thoughtledger:<role>"], expires_at=<exp>, resource=<audience>)``; anything else is
    refused (``None``), which the SDK answers with 401 and ``WWW-Authenticate``.
    """

    def __init__(
        self,
        issuer: str,
        audience: str,
        role_claim: str = DEFAULT_ROLE_CLAIM,
        *,
        jwks_url: str | None = None,
        leeway: float = LEEWAY,
        timeout: float = FETCH_TIMEOUT,
        subjects: Mapping[str, str] | None = None,
    ) -> None:
        """Configure the checks; nothing is fetched before :meth:`prepare` or the first token.

        Args:
            issuer: The issuer's identifier, as its tokens' ``iss`` and its metadata say.
            audience: What ``aud`` must hold: this server's resource URL or an API name the
                issuer uses for it.
            role_claim: The claim naming the principal's role.
            jwks_url: The issuer's key set, instead of the one its metadata names.
            leeway: Seconds of clock difference forgiven on ``nbf`` and ``iat``.
            timeout: Seconds a fetch of the issuer's metadata or keys may take.
            subjects: ``None``: each token's ``sub`` is its principal (the issuer is the only
                source of principals). Else the issuer's principals are kept apart from the
                other source's: ``ISSUER#sub``, except the subjects this maps to a name on
                purpose.

        Raises:
            InvalidInputError: ``issuer`` or ``jwks_url`` is not an ``https`` URL (``http`` only
                on loopback), the issuer has a query or a fragment, or ``audience`` or
                ``role_claim`` is empty.
        """
        if not audience.strip() or not role_claim.strip():
            raise InvalidInputError("the audience and the role claim must not be empty")
        if urlsplit(issuer).query or urlsplit(issuer).fragment:
            # RFC 8414 section 2: an issuer identifier has no query and no fragment.
            raise InvalidInputError(f"the issuer {issuer!r} must have no query or fragment")
        self.keys = KeySet(issuer, jwks_url=jwks_url, timeout=timeout)
        self.audience = audience
        self.role_claim = role_claim
        self.leeway = leeway
        self.subjects = None if subjects is None else dict(subjects)

    @property
    def issuer(self) -> str:
        """The issuer tokens must name (as its metadata spells it, once fetched)."""
        return self.keys.issuer

    async def prepare(self) -> None:
        """Fetch the issuer's metadata and keys now, so a wrong issuer stops a server at start.

        Raises:
            IssuerError: They cannot be fetched or are not usable.
        """
        await self.keys.refresh()

    async def verify_token(self, token: str) -> AccessToken | None:
        """Return who ``token`` stands for, or ``None`` when it does not pass every check."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None  # not a JWT at all (a token-file token, say): nothing to log
        algorithm = header.get("alg")
        kid = header.get("kid")
        if algorithm not in ALGORITHMS:
            return _refused(f"algorithm {algorithm!r} is not accepted")
        if kid is not None and not isinstance(kid, str):
            return _refused("malformed key id")
        jwk = await self.keys.key(kid)
        if jwk is None:
            return _refused(f"no key {kid!r} in the issuer's key set")
        if jwk.get("kty") != _KEY_TYPES[algorithm[:2]] or jwk.get("alg", algorithm) != algorithm:
            return _refused(f"key {kid!r} is not for {algorithm}")
        try:
            key = jwt.PyJWK(jwk, algorithm)
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            return _refused(str(exc))
        # PyJWT forgives the leeway on exp too; the SDK does not on /mcp. One rule on every
        # door: a token is refused from the second its exp names (the SDK's own comparison).
        if int(claims["exp"]) < int(time.time()):
            return _refused("Signature has expired")
        return self._access(token, claims)

    def principal_name(self, subject: str) -> str:
        """The principal a token whose ``sub`` is ``subject`` stands for (see ``subjects``)."""
        if self.subjects is None:
            return subject
        return self.subjects.get(subject, f"{self.issuer}#{subject}")

    def _access(self, token: str, claims: dict[str, Any]) -> AccessToken | None:
        subject = claims["sub"]
        if not isinstance(subject, str) or not 0 < len(subject) <= MAX_SUBJECT:
            return _refused("sub is not a string of 1-256 characters")
        if not subject.isprintable():
            return _refused("sub holds control characters")
        role = self._role(claims)
        if role is None:
            return _refused(f"the {self.role_claim} claim names no role ({', '.join(ROLES)})")
        client = claims.get("client_id") or claims.get("azp")
        return AccessToken(
            token=token,
            client_id=client if isinstance(client, str) and client.isprintable() else subject,
            subject=self.principal_name(subject),
            scopes=[SCOPE_PREFIX + role],
            expires_at=int(claims["exp"]),
            resource=self.audience,
            claims={"iss": self.issuer},
        )

    def _role(self, claims: dict[str, Any]) -> str | None:
        if self.role_claim in claims:
            value = claims[self.role_claim]
            named = [value] if isinstance(value, str) else value
            if not isinstance(named, list):
                return None
            scopes = [
                item if item.startswith(SCOPE_PREFIX) else SCOPE_PREFIX + item
                for item in named
                if isinstance(item, str)
            ]
            if not any(scope.removeprefix(SCOPE_PREFIX) in ROLES for scope in scopes):
                return None
            return role_of(scopes)
        return role_of(_scopes(claims))


def _scopes(claims: dict[str, Any]) -> list[str]:
    # RFC 9068 puts scopes in "scope" as one space-separated string; Entra ID uses "scp".
    scopes: list[str] = []
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            scopes.extend(value.split())
        elif isinstance(value, list):
            scopes.extend(item for item in value if isinstance(item, str))
    return scopes


def _refused(reason: str) -> AccessToken | None:
    """Log why a token was refused (a claim or a key, never the token); refuse it: ``None``."""
    _log.info("%s", event_line("token_refused", {"reason": repr(reason)}))
    return None


__all__ = ["ALGORITHMS", "DEFAULT_ROLE_CLAIM", "LEEWAY", "IssuerTokenVerifier"]
