"""The thinking tools' parameters, generated from the one table of a thought's fields.

The SDK builds a tool's input schema and its arguments model from the function's signature
(``inspect.signature`` and the annotations, each ``Annotated[type, Field(...)]``). The thinking
tools take every field of a thought, so their signatures are made here from
:data:`thoughtledger.ledger.thought.THOUGHT_TABLE`: each field with the MCP tools' lax type for its
kind (:mod:`thoughtledger.adapters.mcp.tools.lax_types`), its camelCase name as the official tool's
``validation_alias`` (the snake_case tools take the snake_case name), and its published words
(:mod:`thoughtledger.adapters.mcp.tools.descriptions`, the definition's own where none are
published); then each tool's own parameters. A new field of a thought is taken by every thinking
tool without an edit here.
"""

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import Field

from thoughtledger.adapters.mcp.tools.lax_types import LaxCount, LaxFlag, LaxText
from thoughtledger.ledger.thought import THOUGHT_FIELDS, ThoughtField, in_order

_LAX: dict[type, Any] = {int: LaxCount, bool: LaxFlag, str: LaxText}
"""The MCP tools' type for each kind of thought field."""

OFFICIAL_CORE_ORDER = ("thought", "next_thought_needed", "thought_number", "total_thoughts")
"""The order the official server lists the core fields in (its marks follow, then ours)."""
SNAKE_CORE_ORDER = ("thought", "thought_number", "total_thoughts", "next_thought_needed")
"""The order the MCP API reference lists them in."""

_F = TypeVar("_F", bound=Callable[..., Any])


def parameter(
    name: str, annotation: Any, default: Any = inspect.Parameter.empty
) -> inspect.Parameter:
    """One keyword parameter of a tool function."""
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def thought_parameters(
    core_order: Sequence[str], words: Mapping[str, str], *, camel: bool
) -> list[inspect.Parameter]:
    """Every field of a thought as a tool parameter, in ``core_order`` and then the marks.

    Args:
        core_order: The order of the core fields (see
            :func:`thoughtledger.ledger.thought.in_order`).
        words: Published descriptions by snake_case name; a field without one is described in
            the definition's words.
        camel: Whether the tool takes the camelCase names (a ``validation_alias`` each).
    """
    return [_parameter(field, words, camel=camel) for field in in_order(core_order)]


def _parameter(field: ThoughtField, words: Mapping[str, str], *, camel: bool) -> inspect.Parameter:
    lax = _LAX[field.kind]
    info: dict[str, Any] = {}
    if camel and field.camel != field.name:
        info["validation_alias"] = field.camel
    described = Field(**info, description=words.get(field.name, field.description))
    if field.optional:
        return parameter(field.name, Annotated[lax | None, described], None)
    return parameter(field.name, Annotated[lax, described])


def thought_fields(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A thinking tool's thought, snake_case, from its arguments; ``None`` means not given.

    The fields are the thought's own (:data:`thoughtledger.ledger.thought.THOUGHT_FIELDS`): a tool
    takes each as a parameter of the same name, and passes them on without naming them again.
    """
    return {name: value for name in THOUGHT_FIELDS if (value := arguments.get(name)) is not None}


def with_parameters(fn: _F, parameters: Sequence[inspect.Parameter]) -> _F:
    """Give ``fn`` (``async def name(*, ctx, **arguments)``) the signature the SDK reads.

    ``parameters`` come first, the injected ``ctx`` last; the annotations follow the signature,
    as :func:`typing.get_type_hints` (with which the SDK finds the context) reads them.
    """
    # Imported here, where a tool is made: a thought's parameters are also read where the MCP
    # SDK (its server, its 500-odd models) is not needed, by `thoughtledger record`.
    from thoughtledger.adapters.mcp.tools.context import AppContext

    signature = inspect.signature(fn)
    returns = signature.return_annotation
    every = [*parameters, parameter("ctx", AppContext)]
    fn.__signature__ = signature.replace(parameters=every)  # type: ignore[attr-defined]  # read by inspect.signature
    fn.__annotations__ = {p.name: p.annotation for p in every} | {"return": returns}
    return fn


__all__ = [
    "OFFICIAL_CORE_ORDER",
    "SNAKE_CORE_ORDER",
    "parameter",
    "thought_fields",
    "thought_parameters",
    "with_parameters",
]
