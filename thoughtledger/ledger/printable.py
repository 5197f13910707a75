r"""Text a terminal can trust: control characters shown, never obeyed.

A thought, a session's metadata or a driver's message is written by someone else. Printed as
it is, ``ESC ] 0;title BEL`` renames the operator's window, ``ESC [2J`` clears the screen, a
carriage return overwrites the line before it and a bidi override (U+202E) makes text read
backwards. Every text a person reads goes through :func:`visible` (the command line's consoles
and the server's thought box do it at one point each), which shows each such character as its
escape (``\x1b``, ``\u202e``) instead; JSON output keeps the exact text.
"""

import re

_MULTI_LINE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 but tab and newline, DEL, C1, and the bidi embeddings, overrides and isolates."""

_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""The same, and tab and newline too: for a text that must stay on one line."""

ESCAPED = re.compile(r"\\x[0-9a-f]{2}|\\u20[26][0-9a-f]")
"""What :func:`visible` writes in place of a control character (to style it dimly)."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, one_line: bool = False) -> str:
    r"""Return ``text`` with every control character shown as its escape.

    Args:
        text: Anything to be read by a person on a terminal.
        one_line: Escape tab and newline too (a text that must not break a line or a box);
            otherwise they are kept, as multi-line output needs them.

    Returns:
        ``text`` unchanged when it holds no control character; else with each one, and each
        bidi override, embedding or isolate, replaced by ``\xNN`` or ``\uNNNN``.
    """
    pattern = _ONE_LINE if one_line else _MULTI_LINE
    if pattern.search(text) is None:  # the usual case: no copy
        return text
    return pattern.sub(_escape, text)


__all__ = ["ESCAPED", "visible"]
