r"""The MCP tools' argument types: exactly what the official server accepts, and its refusals.

Only the MCP tools take JavaScript-style input (zod, reading numbers with JavaScript's
``Number()``); the ledger's own types are strict (:mod:`thoughtledger.ledger.thought_types`).

========================  ==========================================  ===========================
field                     accepted                                    rejected
========================  ==========================================  ===========================
numbers (LaxCount)        whole numbers from 1 to 2**53 - 1 (zod's    ``2.5``, ``"abc"``, ``0``,
                          safe integers); integral floats (``2.0``);  ``true``, ``"2.5"``,
                          strings as JavaScript's ``Number()`` reads  ``"\u0663"``, ``"\uff13"``,
                          them (``" 3 "``, ``"\ufeff3"``, ``"3.0"``,   ``"\x1c3"``, ``"-0x10"``,
                          ``"1e1"``, ``"0x10"``, ``"0b11"``)          ``"Infinity"``, ``"1e20"``
flags (LaxFlag)           ``true``/``false``; the strings             ``"yes"``, ``"on"``,
                          ``"true"``/``"false"`` in any case          ``"1"``, ``1``, ``0``
text (LaxText)            strings of valid Unicode                    numbers, booleans, objects,
                                                                      a lone surrogate
========================  ==========================================  ===========================

``Number()`` trims JavaScript's white space (which has U+FEFF and every space separator, but not
the controls U+001C-U+001F that Python's ``str.strip`` also takes) and reads only ASCII digits.
Deliberate differences from the official server: ``true``, ``false`` and arrays are not numbers
here (its ``Number(true)`` is 1, ``Number([5])`` is 5), and ``null`` for an optional argument
means "not given" (the official server refuses it; OpenAI's strict function calling sends it).
"""

import json
import re
from typing import Annotated

from annotated_types import Ge, Le
from pydantic import AfterValidator, BeforeValidator, Strict
from pydantic_core import ErrorDetails

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest whole number the official server takes (zod's ``int()`` is a safe integer)."""

# ECMAScript's StrWhiteSpaceChar: TAB, VT, FF, SP, NBSP, ZWNBSP (U+FEFF), the other space
# separators (Zs), and the line terminators LF, CR, LS, PS.
_JS_WHITE_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# StrNumericLiteral, ASCII digits only: a signed decimal (or Infinity), or an unsigned 0x/0o/0b.
_JS_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_JS_RADIX = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")


def js_number(text: str) -> float | int | None:
    """What JavaScript's ``Number(text)`` gives, or ``None`` where it gives ``NaN``.

    Whole numbers written in hexadecimal, octal or binary come back as exact ``int``; anything
    decimal comes back as the same IEEE double JavaScript reads (``inf`` for ``"Infinity"``).
    """
    trimmed = text.strip(_JS_WHITE_SPACE)
    if not trimmed:
        return 0
    if _JS_RADIX.fullmatch(trimmed):
        return int(trimmed, 0)
    if _JS_DECIMAL.fullmatch(trimmed):
        return float(trimmed)
    return None


def coerce_count(value: object) -> object:
    """Turn what the official server reads as a number into an ``int``; pass the rest on.

    Anything returned unchanged is then judged by a strict integer check, so ``"abc"``, ``2.5``,
    ``"Infinity"`` and ``True`` are rejected there with a type error; whole numbers out of range
    are rejected by the bounds of :data:`LaxCount`.
    """
    if isinstance(value, str):
        number = js_number(value)
        if number is None:
            return value
        value = number
    if isinstance(value, float) and value.is_integer():  # False for inf and nan
        return int(value)
    return value


def coerce_flag(value: object) -> object:
    """Turn ``"true"``/``"false"`` (any case) into a ``bool``; pass everything else on unchanged."""
    if isinstance(value, str):
        lowered = value.lower()
        if lowered == "true":
            return True
        if lowered == "false":
            return False
    return value


def valid_unicode(value: str) -> str:
    r"""Refuse a string holding a lone surrogate, which no UTF-8 ledger can store.

    JSON may carry one (``"a\ud800b"``); JavaScript keeps it, but it has no UTF-8 encoding, so
    it could not be stored, hashed or exported as sent, and replacing it would change the
    thought without saying so.

    Raises:
        ValueError: ``value`` holds a lone surrogate.
    """
    if value.isascii():  # constant time: the common case
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"contains a lone surrogate (\\u{ord(value[exc.start]):04x}) at index {exc.start}; "
            "a \\u escape of a surrogate must be one of a high-low pair: send valid Unicode"
        ) from exc
    return value


LaxCount = Annotated[int, Strict(), Ge(1), Le(MAX_SAFE_INTEGER), BeforeValidator(coerce_count)]
"""A thought number or estimate: a safe whole number >= 1, coerced as the official server does."""

LaxFlag = Annotated[bool, Strict(), BeforeValidator(coerce_flag)]
"""A boolean, also spelled ``"true"``/``"false"`` in any case; nothing else."""

LaxText = Annotated[str, Strict(), AfterValidator(valid_unicode)]
"""A string of valid Unicode; numbers and booleans are not turned into text."""


def plain_wording(item: ErrorDetails) -> str:
    """The MCP tools' wording: what the field must be, and what was sent."""
    kind = item["type"]
    problem = _explain(kind, item["msg"], item.get("ctx") or {})
    if kind != "missing":
        problem += f" (got {_shown(item['input'])})"
    return problem


def _explain(kind: str, message: str, context: dict[str, object]) -> str:
    if kind == "missing":
        return "required"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "must be a whole number of at least 1"
    if kind == "greater_than_equal":
        return f"must be at least {context.get('ge')}"
    if kind == "less_than_equal":
        return f"must be at most {context.get('le')}"
    if kind in ("bool_type", "bool_parsing"):
        return 'must be true or false (or the string "true" or "false")'
    if kind == "string_type":
        return "must be a string"
    if kind in ("float_type", "float_parsing"):
        return "must be a number"
    # Anything else (dates, literals, custom validators): pydantic's own sentence is clear enough.
    return message.removeprefix("Value error, ")


def _shown(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    # A lone surrogate is shown as its escape: the answer must encode as UTF-8.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


__all__ = [
    "MAX_SAFE_INTEGER",
    "LaxCount",
    "LaxFlag",
    "LaxText",
    "coerce_count",
    "coerce_flag",
    "js_number",
    "plain_wording",
    "valid_unicode",
]
