"""What a thought is: its fields, once, from which every way in and out derives.

:class:`ThoughtCore` holds what every thought has, :class:`ThoughtMarks` what a caller may add
(revision, branch, "needs more"). :data:`THOUGHT_TABLE` reads both into one table of fields (name,
camelCase name, kind, description, whether it is an optional mark, its column type), and the rest
derives from the models or the table: the command
(:class:`thoughtledger.ledger.decide.ThinkCommand`) and every event carrying a thought
(:mod:`thoughtledger.ledger.events`) from the models; from the table, the MCP tools' signatures
(:mod:`thoughtledger.adapters.mcp.tools.parameters`), the in-process tool's arguments,
:data:`HistoryItem`, the folds' thought entries, the SQL views and the CSV and Parquet columns
(:mod:`thoughtledger.ledger.store.columns`), the browser view's payload, the spans, the language
model's prompt, the CLI's tree and the MCP server's box on stderr. The Python API's keyword
arguments are typed by :mod:`thoughtledger.ledger.thought_marks`, generated from this module by
``tools/gen_thought_marks.py`` and checked in, since a type checker reads source. A new optional
field is one field appended to :class:`ThoughtMarks`, with a description a model can act on, and
that tool run once; a test adds a field of each kind in a copy of the package and finds it on
every one of those.

Where a way out lists the fields in an order of its own (the official server's, the views'), it
names only the order of the four core fields, which every thought has; the marks follow in
:data:`MARKS` order.
"""

import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from thoughtledger.ledger.thought_types import Count


@dataclass(frozen=True, slots=True)
class ShownAfter:
    """Where a mark is listed when that is not where it is stored: right after ``name``.

    ``needs_more_thoughts`` was the first mark stored, and every published list (the official
    server's, hence ours) names it last; a new mark needs none of this.
    """

    name: str


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
        ShownAfter("branch_id"),
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


Kind = type[int] | type[bool] | type[str]
"""What a field holds: a whole number of at least 1 (a count), a boolean or text."""

ColumnType = Literal["int64", "bool", "string"]
"""A field's column type in the views and the exports (Parquet's names)."""

_COLUMN_TYPES: dict[type, ColumnType] = {int: "int64", bool: "bool", str: "string"}


@dataclass(frozen=True, slots=True)
class ThoughtField:
    """One field of a thought, as every way in and out names and types it.

    Attributes:
        name: snake_case, as commands, events, the snake_case tools and the views name it.
        camel: camelCase, as the official server and the session pattern spell it.
        kind: ``int`` (a count of at least 1), ``bool`` or ``str``.
        description: What a model is told about it where no wording of its own is published.
        optional: Whether it is a mark a caller may leave out (``None``: not given).
        column_type: Its type as a column of ``tl_thoughts``, the CSV and Parquet exports.
    """

    name: str
    camel: str
    kind: Kind
    description: str
    optional: bool
    column_type: ColumnType


def _kind(annotation: Any) -> Kind:
    # X | None and Annotated[X, ...] down to X; a thought's fields hold counts, flags or text.
    if get_origin(annotation) in (Union, types.UnionType):
        [annotation] = [arg for arg in get_args(annotation) if arg is not type(None)]
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if annotation not in _COLUMN_TYPES:
        raise TypeError(f"a thought field holds int, bool or str, not {annotation!r}")
    kind: Kind = annotation
    return kind


def _table(model: type[BaseModel], *, optional: bool) -> list[tuple[ThoughtField, str | None]]:
    rows = []
    for name, info in model.model_fields.items():
        if info.description is None:
            raise TypeError(f"the thought field {name!r} needs a description a model can act on")
        after = next((m.name for m in info.metadata if isinstance(m, ShownAfter)), None)
        kind = _kind(info.annotation)
        field = ThoughtField(
            name, to_camel(name), kind, info.description, optional, _COLUMN_TYPES[kind]
        )
        rows.append((field, after))
    return rows


def _listed(rows: list[tuple[ThoughtField, str | None]]) -> tuple[ThoughtField, ...]:
    listed = [field for field, after in rows if after is None]
    for field, after in rows:
        if after is not None:
            listed.insert(next(i for i, f in enumerate(listed) if f.name == after) + 1, field)
    return tuple(listed)


CORE: tuple[ThoughtField, ...] = tuple(f for f, _ in _table(ThoughtCore, optional=False))
"""The fields every thought has, in definition order."""
MARKS: tuple[ThoughtField, ...] = _listed(_table(ThoughtMarks, optional=True))
"""The optional marks, in the order every published list names them (new ones last)."""
THOUGHT_TABLE: tuple[ThoughtField, ...] = (*CORE, *MARKS)
"""The one table of a thought's fields: the core, then the marks."""
BY_NAME: dict[str, ThoughtField] = {field.name: field for field in THOUGHT_TABLE}
"""Each field by its snake_case name."""

THOUGHT_FIELDS: tuple[str, ...] = tuple(field.name for field in THOUGHT_TABLE)
"""Every field of a thought, snake_case, as commands and events name them."""

CAMEL_NAMES: dict[str, str] = {field.name: field.camel for field in THOUGHT_TABLE}
"""Each field's camelCase name, as the official server and the session pattern spell it."""


def in_order(core: Sequence[str]) -> tuple[ThoughtField, ...]:
    """Every field, the core four in a way out's own ``core`` order, then the marks.

    Raises:
        ValueError: ``core`` does not name each core field exactly once.
    """
    if sorted(core) != sorted(field.name for field in CORE):
        raise ValueError(f"{core} must name each of the core fields {[f.name for f in CORE]}")
    return (*(BY_NAME[name] for name in core), *MARKS)


def _history_item() -> type[BaseModel]:
    fields: dict[str, Any] = {"thought_number": (int, ...), "thought": (str, ...)}
    for mark in MARKS:
        fields[mark.name] = (mark.kind | None, None)
    fields["redacted"] = (bool | None, FieldInfo(default=None))
    model: type[BaseModel] = create_model(
        "HistoryItem",
        __config__=ConfigDict(alias_generator=to_camel),
        # The description is published in an output schema: its words stay as they were.
        __doc__=(
            "One thought in the session pattern's ``thoughtHistory``, with its revision and branch."
        ),
        __module__=__name__,
        **fields,
    )
    return model


HistoryItem = _history_item()
"""One thought in the session pattern's ``thoughtHistory``: its number and text, and each mark
given (``redacted: true`` when its text was redacted and reads ``[redacted]``)."""

GUIDANCE = """\
A detailed tool for dynamic and reflective problem-solving through thoughts.
Each thought can build on, question, or revise previous insights as understanding deepens.

When to use this tool:
- Breaking down complex problems into steps
- Planning and design with room for revision
- Analysis that might need course correction
- Problems where the full scope might not be clear initially

You should:
1. Start with an initial estimate of needed thoughts, but be ready to adjust
2. Feel free to question or revise previous thoughts, or branch to explore alternatives
3. Express uncertainty when present; ignore what is irrelevant to the current step
4. Generate a solution hypothesis and verify it against your earlier steps until satisfied
5. Provide a single, ideally correct answer as the final output

"""
"""The official advice cut to what a model needs besides the parameters' own words.

OpenAI refuses a function description over 1,024 characters (``string_above_max_length``), and
the official text has 2,781 (the session pattern's, 1,879). What their "Parameters explained"
lists and their advice about particular parameters said now lives in those parameters'
descriptions (above), so a model still reads all of it, next to the field it concerns. The
in-process tool (:mod:`thoughtledger.adapters.tool`) and the MCP server's compact
``sequentialthinking`` (:mod:`thoughtledger.adapters.mcp.tools.descriptions`) both start with it;
it sits here, beside the fields' descriptions, so that neither way in imports the other.
"""


__all__ = [
    "BY_NAME",
    "CAMEL_NAMES",
    "CORE",
    "GUIDANCE",
    "MARKS",
    "THOUGHT_FIELDS",
    "THOUGHT_TABLE",
    "ColumnType",
    "HistoryItem",
    "Kind",
    "ShownAfter",
    "ThoughtCore",
    "ThoughtField",
    "ThoughtMarks",
    "in_order",
]
