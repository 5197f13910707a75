"""An OAuth issuer on loopback: its metadata and key set over real HTTP, and the tokens it signs.

Usage::

    with issuing() as issuer:                           # http://127.0.0.1:PORT
        token = issuer.token("alice", audience=url)     # ES256, signed with a published key
        issuer.rotate()                                 # a new key, published from now on
        issuer.fetches("/jwks.json")                    # how often the key set was fetched

Keys are made with ``cryptography``; tokens are signed with PyJWT, and the hostile ones (``alg:
none``, HMAC keyed with the public key) are put together by hand, as an attacker would.
"""

import base64
import hashlib
import hmac
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

Metadata = Literal["oauth", "openid"]
JWKS_PATH = "/jwks.json"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class Issuer:
    """A running issuer.

    Attributes:
        url: Its identifier and origin (``http://127.0.0.1:PORT``).
        metadata: Which metadata document it serves (RFC 8414's or OpenID's).
        keys: Its signing keys by key id; all are published.
        said_issuer: The ``issuer`` its metadata states (by default ``url``).
        redirects: Paths answered with a redirect to the URL given.
        served: How often each path was asked for.
    """

    url: str = ""
    metadata: Metadata = "oauth"
    keys: dict[str, ec.EllipticCurvePrivateKey] = field(default_factory=dict)
    said_issuer: str | None = None
    redirects: dict[str, str] = field(default_factory=dict)
    served: Counter[str] = field(default_factory=Counter)

    def rotate(self) -> str:
        """Publish a new P-256 key; return its key id (tokens are signed with it from now on)."""
        kid = f"k{len(self.keys) + 1}"
        self.keys[kid] = ec.generate_private_key(ec.SECP256R1())
        return kid

    @property
    def kid(self) -> str:
        """The newest key's id."""
        return list(self.keys)[-1]

    def claims(self, sub: str, audience: str | list[str], **extra: Any) -> dict[str, Any]:
        """Good claims for ``sub``: this issuer, ``audience``, five minutes to live."""
        now = int(time.time())
        return {"iss": self.url, "sub": sub, "aud": audience, "iat": now, "exp": now + 300, **extra}

    def token(
        self, sub: str, audience: str | list[str], *, kid: str | None = None, **extra: Any
    ) -> str:
        """A token for ``sub`` signed ES256 with key ``kid`` (default the newest)."""
        kid = kid or self.kid
        return self.sign(self.claims(sub, audience, **extra), self.keys[kid], kid)

    @staticmethod
    def sign(claims: dict[str, Any], key: ec.EllipticCurvePrivateKey, kid: str) -> str:
        """``claims`` signed ES256 with ``key``, under the key id ``kid``."""
        return jwt.encode(claims, key, algorithm="ES256", headers={"kid": kid})

    def unsigned(self, claims: dict[str, Any]) -> str:
        """``claims`` with ``alg: none`` and no signature."""
        header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": self.kid}).encode())
        return f"{header}.{_b64(json.dumps(claims).encode())}."

    def hmac_with_public_key(self, claims: dict[str, Any]) -> str:
        """``claims`` signed HS256 with the published public key's PEM as the secret."""
        public = self.keys[self.kid].public_key()
        secret = public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": self.kid}).encode())
        body = f"{header}.{_b64(json.dumps(claims).encode())}"
        signature = hmac.new(secret, body.encode(), hashlib.sha256).digest()
        return f"{body}.{_b64(signature)}"

    def fetches(self, path: str) -> int:
        """How many times ``path`` was asked for."""
        return self.served[path]

    def jwks(self) -> dict[str, Any]:
        """The published key set."""
        keys = []
        for kid, key in self.keys.items():
            jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "ES256"})
        return {"keys": keys}

    def document(self, path: str) -> dict[str, Any] | None:
        """What the issuer answers at ``path`` (``None``: 404)."""
        wanted = {
            "oauth": "/.well-known/oauth-authorization-server",
            "openid": "/.well-known/openid-configuration",
        }[self.metadata]
        if path == wanted:
            return {
                "issuer": self.said_issuer or self.url,
                "jwks_uri": self.url + JWKS_PATH,
                "token_endpoint": self.url + "/token",
                "response_types_supported": ["code"],
            }
        if path == JWKS_PATH:
            return self.jwks()
        return None


class _Handler(BaseHTTPRequestHandler):
    issuer: Issuer

    def do_GET(self) -> None:
        self.issuer.served[self.path] += 1
        if (location := self.issuer.redirects.get(self.path)) is not None:
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        document = self.issuer.document(self.path)
        body = json.dumps(document).encode() if document is not None else b"{}"
        self.send_response(200 if document is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the base's name
        pass  # quiet: pytest shows stderr of failed tests only, and this would drown it


@contextmanager
def issuing(metadata: Metadata = "oauth") -> Iterator[Issuer]:
    """Serve a new issuer (one published key) on a free loopback port while the block runs."""
    issuer = Issuer(metadata=metadata)
    issuer.rotate()
    handler = type("Handler", (_Handler,), {"issuer": issuer})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    issuer.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
