r"""The types of a thought's fields (the ledger's, strict and lax) and how a refusal is told.

Every way in checks the same fields with one of three sets of types:

* :data:`Count`, :data:`Text` (and ``bool``): the ledger's own, inside models that are strict
  (commands and events): ``"3"`` is not a number and ``1`` is not a boolean.
* :data:`StrictCount`, :data:`StrictFlag`, :data:`StrictText`: the in-process tool's, as strict
  as the session pattern's zod schema; a count may be an integral float (``2.0``), which JSON
  Schema counts as an integer.
* :data:`LaxCount`, :data:`LaxFlag`, :data:`LaxText`: the MCP tools', which accept exactly what
  the official server (zod, reading numbers with JavaScript's ``Number()``) accepts:

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

A refusal is told in one line by :func:`describe_errors`, in the wording of the way in.
"""

import json
import re
from collections.abc import Callable
from typing import Annotated

from annotated_types import Ge, Le
from pydantic import AfterValidator, BeforeValidator, Field, Strict, ValidationError
from pydantic_core import ErrorDetails


def _encodable(value: str) -> str:
    # Lone surrogates survive in Python strings but cannot be stored as UTF-8 or hashed; reject them
    # here so the failure is a validation error at the edge, not an encoding error inside a commit.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text contains an unpaired surrogate at index {exc.start}; send valid Unicode"
        ) from exc
    return value


Text = Annotated[str, AfterValidator(_encodable)]
"""A string that is valid Unicode (encodable as UTF-8); NUL characters are allowed.

Commands use it to reject bad text at the edge with a clear message. Events use plain ``str``:
decoding them is the hot loop of every replay, JSON cannot carry a lone surrogate anyway, and
the store's encoder refuses one (see :func:`thoughtledger.ledger.codec.encode_payload`)."""

Count = Annotated[int, Field(ge=1)]
"""A thought number or estimate: a whole number of at least 1."""


# -- strict: the in-process tool ------------------------------------------------------------------


def _whole_float(value: object) -> object:
    # JSON Schema counts 2.0 as an integer and some providers send whole numbers that way: accept
    # exactly what the published schema accepts, and nothing more (not "2", not 2.5, not true).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


StrictCount = Annotated[int, Strict(), Field(ge=1), BeforeValidator(_whole_float)]
"""A count as the in-process tool takes it: a whole number >= 1 (``2.0`` too), never a string."""

StrictFlag = Annotated[bool, Strict()]
"""A boolean as the in-process tool takes it: ``true`` or ``false`` only."""

StrictText = Annotated[Text, Strict()]
"""Text as the in-process tool takes it: a string of valid Unicode, nothing turned into text."""


# -- lax: the MCP tools, as the official server ---------------------------------------------------

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


# -- refusals ---------------------------------------------------------------------------------

Wording = Callable[[ErrorDetails], str]
"""How one way in words one problem (pydantic's error details in, the problem's text out)."""


def describe_errors(error: ValidationError, wording: "Wording | None" = None) -> str:
    """Render a validation error as one line naming every bad field: ``field: problem; ...``.

    Args:
        error: What pydantic refused.
        wording: How each problem is said; :func:`plain_wording` (the MCP tools') by default,
            :func:`command_wording` for commands.

    Example: ``thoughtNumber: must be a whole number of at least 1 (got 1.5); nextThoughtNeeded:
    required``.
    """
    say = plain_wording if wording is None else wording
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {say(item)}"
        for item in error.errors(include_url=False)
    )


def command_wording(item: ErrorDetails) -> str:
    """A command's wording: pydantic's own sentence, but for unknown and empty fields."""
    if item["type"] == "extra_forbidden":
        return "unknown field"
    if item["type"] in ("too_short", "string_too_short"):
        return "must not be empty"
    return item["msg"]


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
    "Count",
    "LaxCount",
    "LaxFlag",
    "LaxText",
    "StrictCount",
    "StrictFlag",
    "StrictText",
    "Text",
    "Wording",
    "coerce_count",
    "coerce_flag",
    "command_wording",
    "describe_errors",
    "js_number",
    "plain_wording",
    "valid_unicode",
]
