"""Secrets out of what is printed: a database URL's password, and credentials in any text.

A ledger URL may hold a password twice over: ``postgresql://user:pw@host/db`` and
``postgresql://user@host/db?password=pw`` (libpq and asyncpg also read ``sslpassword``). Logs and
error lines outlive the session that printed them, so every URL shown to a person goes through
:func:`mask_url`, and every message that may quote one (a driver's error, say) through
:func:`mask_text`.

Providers and the proxies in front of them echo what they were sent ("Incorrect API key
provided: sk-proj-...", an error page quoting ``Authorization: Bearer ...``). Their messages
become the tool error a model reads and a line of the server's log, so every provider message
passes through :func:`mask_secrets` first: it hides the keys configured, word for word, and the
usual shapes of a credential (``sk-`` keys, bearer tokens, ``Authorization`` values,
``api_key=``-style fields and a URL's password).
"""

import re
from collections.abc import Iterable
from urllib.parse import unquote, unquote_plus, urlsplit

MASK = "***"

# Query parameters whose value is a credential: password, sslpassword, passwd, pwd, secret...
_SECRET_PARAMETER = re.compile(r"pass|pwd|secret|token|key|auth", re.IGNORECASE)

# scheme://user:password@host: the password runs to the last @ before a host (a password may
# hold ? : / or @, which a URL parser would take for the start of the query, a port or a path).
_USERINFO = re.compile(r"([\w+.-]+://[^:/@?#]*:)(.*)@[^@/?#]*(?=[/?#]|$)", re.DOTALL)


def mask_url(url: str) -> str:
    """``url`` with its password and every secret query parameter replaced by ``***``.

    Everything else is kept as written (``sqlite:////abs/path.db`` keeps its four slashes).
    """
    userinfo = _USERINFO.match(url)
    redacted = url
    if userinfo is not None:
        redacted = f"{userinfo.group(1)}{MASK}{url[userinfo.end(2) :]}"
    try:
        parts = urlsplit(redacted)
    except ValueError:
        return redacted
    if parts.query:
        base, _, rest = redacted.partition("?")
        query, hash_sign, fragment = rest.partition("#")
        query = "&".join(_redacted_parameter(pair) for pair in query.split("&"))
        redacted = f"{base}?{query}{hash_sign}{fragment}"
    return redacted


def mask_text(text: str, url: str | None) -> str:
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
    found: set[str] = set()
    userinfo = _USERINFO.match(url)
    if userinfo is not None:
        found.add(userinfo.group(2))
        url = url[: userinfo.start(2)] + url[userinfo.end(2) :]
    try:
        parts = urlsplit(url)
    except ValueError:
        return found
    for pair in parts.query.split("&"):
        name, equals, value = pair.partition("=")
        if equals and _SECRET_PARAMETER.search(unquote(name)):
            found.add(value)
    found |= {unquote(secret) for secret in found} | {unquote_plus(secret) for secret in found}
    return {secret for secret in found if secret}


MIN_KNOWN_KEY_CHARS = 4
"""Known keys shorter than this are not masked word for word (it would garble ordinary text)."""

_FIELD = (
    r"(?:x-)?api[_-]?key|apikey|(?:access|refresh|auth|id)[_-]?token|client[_-]?secret"
    r"|secret[_-]?key|password|passwd"
)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Authorization: Bearer abc / "authorization": "Basic abc" / authorization=abc
    (
        re.compile(
            r"""(?i)(\bauthorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token|digest)\s+)?"""
            r"""[^\s"',;]+"""
        ),
        rf"\1{MASK}",
    ),
    (re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]+"), rf"\1{MASK}"),
    # api_key=abc, "x-api-key": "abc", password: abc, ?key=abc&token=abc
    (re.compile(rf"""(?i)(\b(?:{_FIELD})["']?\s*[:=]\s*["']?)[^\s"'&,;]+"""), rf"\1{MASK}"),
    (re.compile(r"(?i)([?&](?:key|token|sig|signature)=)[^&\s\"']+"), rf"\1{MASK}"),
    # OpenAI (sk-, sk-proj-), OpenRouter (sk-or-v1-) and Anthropic (sk-ant-) keys.
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), MASK),
    # scheme://user:password@host
    (re.compile(r"(://[^/\s:@]+:)[^/\s@]+@"), rf"\1{MASK}@"),
)


def mask_secrets(text: str, known: Iterable[str | None] = ()) -> str:
    """Return ``text`` with credentials replaced by ``***``.

    Args:
        text: What a provider (or anything that saw the request) said.
        known: Secrets to hide wherever they appear (the configured API keys); ``None`` and
            keys shorter than :data:`MIN_KNOWN_KEY_CHARS` are skipped.

    Returns:
        The text with every known secret and every credential-shaped value masked.
    """
    secrets = sorted(
        {key for key in known if key and len(key) >= MIN_KNOWN_KEY_CHARS}, key=len, reverse=True
    )
    for secret in secrets:  # longest first: a key that contains another is masked whole
        text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


__all__ = ["MASK", "MIN_KNOWN_KEY_CHARS", "mask_secrets", "mask_text", "mask_url"]
