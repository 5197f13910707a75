"""The ledger's own types of a thought's fields, and how a refusal is told.

:data:`Count` and :data:`Text` (and ``bool``) are the types inside the ledger's models, which are
strict (commands and events): ``"3"`` is not a number and ``1`` is not a boolean. Each way in reads
its own spellings into them with types of its own: the MCP tools accept what the official server
accepts (:mod:`thoughtledger.adapters.mcp.tools.lax_types`), the in-process tool is as strict as the
session pattern (:mod:`thoughtledger.adapters.tool.arguments`).

A refusal is told in one line by :func:`describe_errors`, in the wording of the way in.
"""

from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, Field, ValidationError
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


# -- refusals ---------------------------------------------------------------------------------

Wording = Callable[[ErrorDetails], str]
"""How one way in words one problem (pydantic's error details in, the problem's text out)."""


def describe_errors(error: ValidationError, wording: Wording) -> str:
    """Render a validation error as one line naming every bad field: ``field: problem; ...``.

    Args:
        error: What pydantic refused.
        wording: How each problem is said: :func:`command_wording` for commands, the MCP tools'
            and the in-process tool's own for theirs.

    Example: ``thoughtNumber: must be a whole number of at least 1 (got 1.5); nextThoughtNeeded:
    required``.
    """
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {wording(item)}"
        for item in error.errors(include_url=False)
    )


def command_wording(item: ErrorDetails) -> str:
    """A command's wording: pydantic's own sentence, but for unknown and empty fields."""
    if item["type"] == "extra_forbidden":
        return "unknown field"
    if item["type"] in ("too_short", "string_too_short"):
        return "must not be empty"
    return item["msg"]


__all__ = ["Count", "Text", "Wording", "command_wording", "describe_errors"]
