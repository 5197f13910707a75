"""Argument types for the MCP tools: the official server's coercion, exactly, and plain messages.

The MCP SDK validates tool arguments with pydantic in *lax* mode, which would take ``"yes"``,
``"on"`` and ``1`` as ``True`` and ``true`` as the number 1. The official server (zod) is narrower,
and clients are written against it, so these types are strict and put back only what it accepts:

========================  ==========================================  ===========================
field                     accepted                                    rejected
========================  ==========================================  ===========================
numbers (:data:`Count`)   integers >= 1; integral floats (``2.0``);   ``2.5``, ``"abc"``, ``0``,
                          numeric strings (``"3"``, ``" 3 "``,        ``true``, ``null`` (where
                          ``"3.0"``, ``"1e1"``, ``"0x10"``) as         required), ``"2.5"``
                          JavaScript's ``Number()`` reads them
flags (:data:`Flag`)      ``true``/``false``; the strings             ``"yes"``, ``"on"``,
                          ``"true"``/``"false"`` in any case          ``"1"``, ``1``, ``0``
text (:data:`Text`)       strings of valid Unicode                    numbers, booleans, objects,
                                                                      a lone surrogate
========================  ==========================================  ===========================

The one deliberate difference from ``Number()``: ``true`` is not the number 1 here.
"""

import json
import re
from typing import Annotated, Any

from annotated_types import Ge
from pydantic import AfterValidator, BeforeValidator, Strict, ValidationError

# JavaScript's Number() on a trimmed string: decimal (with fraction and exponent) or 0x/0o/0b.
_DECIMAL_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_RADIX = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+")
# Python refuses to parse integers of more than 4300 digits; nothing that long is a thought number.
_MAX_NUMBER_CHARS = 400


def coerce_count(value: object) -> object:
    """Turn what the official server reads as a whole number into an ``int``; pass the rest on.

    Anything returned unchanged is then judged by a strict integer check, so ``"abc"``, ``2.5``
    and ``True`` are rejected there with a type error.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, str):
        text = value.strip()
        if not text or len(text) > _MAX_NUMBER_CHARS:
            return value
        if _DECIMAL_INTEGER.fullmatch(text):
            return int(text)
        if _RADIX.fullmatch(text):
            return int(text, 0)
        if _DECIMAL.fullmatch(text):
            number = float(text)
            if number.is_integer():  # False for inf and nan
                return int(number)
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


Count = Annotated[int, Strict(), Ge(1), BeforeValidator(coerce_count)]
"""A thought number or estimate: a whole number >= 1, coerced as the official server does."""

Flag = Annotated[bool, Strict(), BeforeValidator(coerce_flag)]
"""A boolean, also spelled ``"true"``/``"false"`` in any case; nothing else."""


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


Text = Annotated[str, Strict(), AfterValidator(valid_unicode)]
"""A string of valid Unicode; numbers and booleans are not turned into text."""


def describe_errors(error: ValidationError) -> str:
    """Render a validation error as one line a model can act on, naming every bad field.

    Example: ``thoughtNumber: must be a whole number of at least 1 (got 1.5); nextThoughtNeeded:
    required``.
    """
    problems = []
    for item in error.errors(include_url=False):
        field = ".".join(str(part) for part in item["loc"]) or "arguments"
        problem = _explain(item["type"], item["msg"], item.get("ctx") or {})
        if item["type"] != "missing":
            problem += f" (got {_shown(item['input'])})"
        problems.append(f"{field}: {problem}")
    return "; ".join(problems)


def _explain(kind: str, message: str, context: dict[str, Any]) -> str:
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
    "Count",
    "Flag",
    "Text",
    "coerce_count",
    "coerce_flag",
    "describe_errors",
    "valid_unicode",
]
