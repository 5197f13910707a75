"""An OAuth issuer's signing keys: found through its metadata, cached, fetched again when needed.

The keys' URL (``jwks_uri``) comes from the issuer's authorization-server metadata (RFC 8414,
``/.well-known/oauth-authorization-server``) or its OpenID configuration
(``/.well-known/openid-configuration``), whose ``issuer`` must be the issuer configured, unless
it is given outright. Keys are cached; a token signed with a key id the cache does not know
(the issuer rotated its keys) makes one fetch, and the fetches tokens prompt are at least
``min_interval`` seconds apart, so a stream of tokens with made-up key ids cannot turn the
server into a hammer on the issuer. Every fetch has a timeout and a size limit; one that fails
keeps the keys already known.

Only keys for signatures with public keys are kept (``kty`` RSA, EC, OKP): a symmetric
(``oct``) key published with the others is never used, so no token is checked with a secret
an attacker could read from the key set.
"""

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread

from thoughtledger.adapters.common.logs import event_line
from thoughtledger.adapters.common.origins import LOOPBACK_HOSTS
from thoughtledger.ledger.errors import InvalidInputError, LedgerError

FETCH_TIMEOUT = 5.0
"""Seconds a metadata or key-set fetch may take."""
MIN_INTERVAL = 30.0
"""Seconds between two fetches of the key set prompted by unknown key ids."""
MAX_AGE = 3600.0
"""Seconds after which known keys are fetched again on the next token (keys retire too)."""
_MAX_BYTES = 1 << 20
_PUBLIC_KEY_TYPES = ("RSA", "EC", "OKP")

_log = logging.getLogger(__name__)


class IssuerError(LedgerError):
    """The OAuth issuer's metadata or keys cannot be fetched, or are not what they should be."""


def check_url(url: str, what: str) -> str:
    """Return ``url`` if keys may be fetched from it: ``https``, or ``http`` on loopback.

    Raises:
        InvalidInputError: Another scheme, no host, or plain ``http`` to another machine
            (anyone on the way could hand the server keys of their own).
    """
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018  # raises for a port out of range or not a number
    except ValueError:
        raise InvalidInputError(f"{what} {url!r} has no valid port") from None
    if not url.isprintable() or any(char.isspace() for char in url):
        raise InvalidInputError(f"{what} {url!r} holds spaces or control characters")
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return url
    raise InvalidInputError(
        f"{what} {url!r} must be an https URL (http only on 127.0.0.1, localhost or ::1)"
    )


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be: RFC 8414's path-inserted URL, then OpenID's."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


class KeySet:
    """The public keys an issuer signs tokens with, by key id (``kid``)."""

    def __init__(
        self,
        issuer: str,
        *,
        jwks_url: str | None = None,
        timeout: float = FETCH_TIMEOUT,
        min_interval: float = MIN_INTERVAL,
        max_age: float = MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Nothing is fetched until :meth:`refresh` or the first :meth:`key`.

        Args:
            issuer: The issuer's identifier (an ``https`` URL).
            jwks_url: The key set's URL, instead of the one the issuer's metadata names.
            timeout: Seconds a fetch may take.
            min_interval: Seconds between fetches prompted by unknown key ids.
            max_age: Seconds after which the keys are fetched again.
            clock: Monotonic seconds.

        Raises:
            InvalidInputError: ``issuer`` or ``jwks_url`` is not an ``https`` URL (``http``
                only on loopback).
        """
        self.issuer = check_url(issuer, "the issuer")
        self.jwks_url = check_url(jwks_url, "the key set URL") if jwks_url else None
        self.timeout, self.min_interval, self.max_age = timeout, min_interval, max_age
        self._clock = clock
        self._keys: dict[str | None, dict[str, Any]] = {}
        self._fetched: float | None = None
        self._tried: float | None = None
        self._lock = anyio.Lock()

    async def refresh(self) -> None:
        """Fetch the issuer's metadata (once) and its key set.

        Raises:
            IssuerError: Either cannot be fetched, or is not what it should be; the keys
                known before are kept.
        """
        async with self._lock:
            await self._refresh()

    async def key(self, kid: str | None) -> dict[str, Any] | None:
        """The JWK with id ``kid`` (``None``: the only key, if there is one), or ``None``.

        An unknown id, or keys older than ``max_age``, make one fetch (at most one per
        ``min_interval``, however many requests ask); a failed fetch is logged, not raised.
        """
        found = self._find(kid)
        if found is not None and not self._stale():
            return found
        async with self._lock:
            # Another request may have fetched while this one waited for the lock.
            found = self._find(kid)
            if (found is None or self._stale()) and self._may_try():
                self._tried = self._clock()
                try:
                    await self._refresh()
                except IssuerError as exc:
                    _log.warning(
                        "%s", event_line("issuer_keys_unavailable", {"reason": repr(str(exc))})
                    )
                found = self._find(kid)
        return found

    def _find(self, kid: str | None) -> dict[str, Any] | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    def _stale(self) -> bool:
        return self._fetched is None or self._clock() - self._fetched > self.max_age

    def _may_try(self) -> bool:
        return self._tried is None or self._clock() - self._tried >= self.min_interval

    async def _refresh(self) -> None:
        if self.jwks_url is None:
            self.issuer, self.jwks_url = await self._discover()
        document = await self._fetch(self.jwks_url)
        keys = document.get("keys")
        if not isinstance(keys, list):
            raise IssuerError(f"the key set at {self.jwks_url} has no list of keys")
        usable = {
            key.get("kid"): key
            for key in keys
            if isinstance(key, dict)
            and key.get("kty") in _PUBLIC_KEY_TYPES
            and key.get("use", "sig") == "sig"
        }
        if not usable:
            raise IssuerError(f"the key set at {self.jwks_url} holds no public signing key")
        self._keys = usable
        self._fetched = self._clock()

    async def _discover(self) -> tuple[str, str]:
        failures = []
        for url in metadata_urls(self.issuer):
            try:
                metadata = await self._fetch(url)
            except IssuerError as exc:
                failures.append(str(exc))
                continue
            named = metadata.get("issuer")
            # RFC 8414 section 3.3: the metadata must be the issuer's own. A trailing slash is
            # the one difference forgiven; the metadata's spelling is the one tokens carry.
            if not isinstance(named, str) or named.rstrip("/") != self.issuer.rstrip("/"):
                raise IssuerError(f"{url} describes the issuer {named!r}, not {self.issuer!r}")
            jwks_url = metadata.get("jwks_uri")
            if not isinstance(jwks_url, str):
                raise IssuerError(f"{url} names no jwks_uri (give --jwks-url)")
            try:
                return named, check_url(jwks_url, "the key set URL")
            except InvalidInputError as exc:
                raise IssuerError(str(exc)) from exc
        raise IssuerError(f"no metadata for the issuer {self.issuer}: {'; '.join(failures)}")

    async def _fetch(self, url: str) -> Mapping[str, Any]:
        # urllib's timeout bounds each socket wait; this bounds the whole fetch.
        with anyio.move_on_after(self.timeout + 1):
            return await anyio.to_thread.run_sync(
                _fetch_json, url, self.timeout, abandon_on_cancel=True
            )
        raise IssuerError(f"{url} did not answer within {self.timeout:g} s")


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only where keys may be fetched from (never down to plain HTTP)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        try:
            check_url(newurl, "a redirect to")
        except InvalidInputError as exc:
            fp.close()  # the redirect's own answer, unread
            raise IssuerError(f"{req.full_url} redirects to {newurl}, refused") from exc
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_CheckedRedirects)


def _fetch_json(url: str, timeout: float) -> Mapping[str, Any]:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})  # noqa: S310
    try:
        with _OPENER.open(request, timeout=timeout) as answer:
            body = answer.read(_MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        exc.close()  # it holds the answer's connection
        raise IssuerError(f"{url} answered HTTP {exc.code}") from exc
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise IssuerError(f"cannot fetch {url}: {reason}") from exc
    if len(body) > _MAX_BYTES:
        raise IssuerError(f"{url} answered more than {_MAX_BYTES} bytes")
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise IssuerError(f"{url} did not answer JSON") from exc
    if not isinstance(document, dict):
        raise IssuerError(f"{url} did not answer a JSON object")
    return document


__all__ = [
    "FETCH_TIMEOUT",
    "MAX_AGE",
    "MIN_INTERVAL",
    "IssuerError",
    "KeySet",
    "check_url",
    "metadata_urls",
]
