"""Masking credentials in what a provider says, before a model or a log reads it.

Providers and the proxies in front of them echo what they were sent ("Incorrect API key
provided: sk-proj-...", an error page quoting ``Authorization: Bearer ...``). Their messages
become the tool error a model reads and, through the MCP SDK, a line of the server's INFO log; so
every provider message passes through :func:`mask_secrets` first. It hides the keys configured
here, word for word, and the usual shapes of a credential: ``sk-`` keys, bearer tokens,
``Authorization`` values, ``api_key=``-style fields and a URL's password.
"""

import re
from collections.abc import Iterable

MASK = "***"

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


__all__ = ["MASK", "MIN_KNOWN_KEY_CHARS", "mask_secrets"]
