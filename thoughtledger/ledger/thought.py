"""What a thought is: its fields, once, from which commands, events and read-back shapes derive.

:class:`ThoughtCore` holds what every thought has, :class:`ThoughtMarks` what a caller may add
(revision, branch, "needs more"). The command (:class:`thoughtledger.ledger.decide.ThinkCommand`),
every event carrying a thought (:mod:`thoughtledger.ledger.events`) and the in-process tool's
arguments (:mod:`thoughtledger.api.tool.arguments`, with each field's description) derive from both,
so a new optional field is one field in :class:`ThoughtMarks`: it is then accepted, validated,
decided, stored and offered by the in-process tool. Three places say the fields in their own words,
and the tests of ``THOUGHT_FIELDS`` name whichever misses one: :class:`HistoryItem` below, the MCP
tools' signatures (:mod:`thoughtledger.api.mcp.thinking`, built by the SDK from the functions
themselves) and the Python API's
:meth:`thoughtledger.api.session.Session.process_sequential_thinking`. The types of the fields,
strict and lax, are in :mod:`thoughtledger.ledger.thought_types`.
"""

import functools
from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from thoughtledger.ledger.thought_types import Count


class ThoughtCore(BaseModel):
    """The fields every thought has.

    Each field's description is what a model is told about it where no wording of its own is
    published (the in-process tool takes them from here: the session pattern's words).
    """

    model_config = ConfigDict(defer_build=True)

    thought: Annotated[str, Field(description="Your current thinking step")]
    thought_number: Annotated[
        Count,
        Field(description="Current thought number (e.g., 1, 2, 3); it can go beyond the total"),
    ]
    total_thoughts: Annotated[
        Count,
        Field(
            description="Estimated total thoughts needed (e.g., 5, 10); adjust it up or down "
            "as you progress"
        ),
    ]
    """The estimate in force after this thought (raised to ``thought_number`` when lower)."""
    next_thought_needed: Annotated[
        bool,
        Field(
            description="Whether another thought step is needed: true if you need more "
            "thinking, even at what seemed like the end; false only when truly done"
        ),
    ]


class ThoughtMarks(BaseModel):
    """The optional fields a caller may add to a thought; ``None`` means not given.

    The order is the stored order of an event's payload: append new fields at the end, each with
    a description a model can act on (see :class:`ThoughtCore`).
    """

    model_config = ConfigDict(defer_build=True)

    needs_more_thoughts: Annotated[
        bool | None,
        Field(description="If more thoughts are needed, even after what seemed like the end"),
    ] = None
    is_revision: Annotated[
        bool | None,
        Field(description="Whether this revises previous thinking (say which in revisesThought)"),
    ] = None
    revises_thought: Annotated[
        Count | None, Field(description="Which thought number is being reconsidered")
    ] = None
    branch_from_thought: Annotated[
        Count | None,
        Field(
            description="Branching point thought number, to explore an alternative path (name "
            "the branch in branchId)"
        ),
    ] = None
    branch_id: Annotated[str | None, Field(description="Branch identifier")] = None


THOUGHT_FIELDS: tuple[str, ...] = (*ThoughtCore.model_fields, *ThoughtMarks.model_fields)
"""Every field of a thought, snake_case, as commands and events name them."""

CAMEL_NAMES: dict[str, str] = {name: to_camel(name) for name in THOUGHT_FIELDS}
"""Each field's camelCase name, as the official server and the session pattern spell it."""


_M = TypeVar("_M", bound=BaseModel)


def from_checked(model: type[_M], fields: Mapping[str, Any]) -> _M:
    """Build ``model`` from ``fields`` that were already validated by the same rules.

    A thought is validated once, on its way in; the command and the event that carry it on take
    the fields as they are (pydantic-core validates these models in about 2 microseconds, and
    building them here costs about as much: what is saved is a second, redundant set of rules
    on the path, not much time). Only for models without validators of their own; fields not
    named take their defaults.
    """
    get = fields.get
    instance = model.__new__(model)
    # In the model's field order, as validation would leave them (repr and dumps follow it).
    values = {name: get(name, default) for name, default in _layout(model)}
    object.__setattr__(instance, "__dict__", values)
    object.__setattr__(instance, "__pydantic_fields_set__", set(fields))
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance


@functools.cache
def _layout(model: type[BaseModel]) -> tuple[tuple[str, Any], ...]:
    # A model's fields in order, each with its plain default (models here have no default
    # factory); a required field's default is never read, as ``fields`` always names it.
    fields = model.model_fields
    assert all(info.default_factory is None for info in fields.values())  # noqa: S101
    return tuple(
        (name, None if info.is_required() else info.default) for name, info in fields.items()
    )


class HistoryItem(BaseModel):
    """One thought in the session pattern's ``thoughtHistory``, with its revision and branch."""

    model_config = ConfigDict(alias_generator=to_camel)

    thought_number: int
    thought: str
    is_revision: bool | None = None
    revises_thought: int | None = None
    branch_from_thought: int | None = None
    branch_id: str | None = None
    needs_more_thoughts: bool | None = None
    redacted: bool | None = None
    """``True`` when the thought's text was redacted (it reads ``[redacted]``); else left out."""


__all__ = [
    "CAMEL_NAMES",
    "THOUGHT_FIELDS",
    "HistoryItem",
    "ThoughtCore",
    "ThoughtMarks",
    "from_checked",
]
