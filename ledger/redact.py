"""Secrets out of what is printed: a database URL's password, wherever the URL carries it.

A ledger URL may hold a password twice over: ``postgresql://user:pw@host/db`` and
``postgresql://user@host/db?password=pw`` (libpq and asyncpg also read ``sslpassword``). Logs and
error lines outlive the session that printed them, so every URL shown to a person goes through
:func:`redact_url`, and every message that may quote one (a driver's error, say) through
:func:`redact_text`.
"""

import re
from urllib.parse import unquote, unquote_plus, urlsplit

MASK = "***"

# Query parameters whose value is a credential: password, sslpassword, passwd, pwd, secret...
_SECRET_PARAMETER = re.compile(r"pass|pwd|secret|token|key|auth", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` with its password and every secret query parameter replaced by ``***``.

    Everything else is kept as written (``sqlite:////abs/path.db`` keeps its four slashes).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    redacted = url
    userinfo, at, host = parts.netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:{MASK}@{host}"
        redacted = redacted.replace(f"//{parts.netloc}", f"//{netloc}", 1)
    if parts.query:
        base, _, rest = redacted.partition("?")
        query, hash_sign, fragment = rest.partition("#")
        query = "&".join(_redacted_parameter(pair) for pair in query.split("&"))
        redacted = f"{base}?{query}{hash_sign}{fragment}"
    return redacted


def redact_text(text: str, url: str | None) -> str:
    """``text`` with every secret of ``url`` (its password, secret parameters) masked.

    Messages quote URLs in their own ways (a driver adds ``+asyncpg``, percent-decodes), so
    the secret values themselves are masked wherever they occur, decoded or not.
    """
    if not url:
        return text
    for secret in sorted(_secrets(url), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _redacted_parameter(pair: str) -> str:
    name, equals, _value = pair.partition("=")
    if equals and _SECRET_PARAMETER.search(unquote(name)):
        return f"{name}={MASK}"
    return pair


def _secrets(url: str) -> set[str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return set()
    found: set[str] = set()
    userinfo, at, _host = parts.netloc.rpartition("@")
    if at and ":" in userinfo:
        found.add(userinfo.split(":", 1)[1])
    for pair in parts.query.split("&"):
        name, equals, value = pair.partition("=")
        if equals and _SECRET_PARAMETER.search(unquote(name)):
            found.add(value)
    found |= {unquote(secret) for secret in found} | {unquote_plus(secret) for secret in found}
    return {secret for secret in found if secret}


__all__ = ["MASK", "redact_text", "redact_url"]
