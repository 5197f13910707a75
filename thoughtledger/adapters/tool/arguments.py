"""The in-process tool's arguments: derived from the one definition of a thought, and checked.

:data:`ThinkingInput` is built from :mod:`thoughtledger.ledger.thought`: each field of a thought,
camelCase, with the in-process tool's strict type for its kind (``StrictCount``, ``StrictFlag``,
``StrictText``), the bounds the command sets (a non-empty thought, a branch id's length) and the
description the definition gives it; the tool adds only its own two, ``sessionId`` and
``clearSession``. A new field of a thought is offered here without an edit.
"""

import json
import types
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin

from annotated_types import BaseMetadata
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    create_model,
)
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from thoughtledger.api import ThinkCommand
from thoughtledger.ledger.errors import InvalidThoughtError
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.thought import CORE, THOUGHT_FIELDS, ThoughtCore, ThoughtMarks, in_order
from thoughtledger.ledger.thought_types import Text, command_wording, describe_errors
from thoughtledger.projections.answers import JsonDict

# -- the in-process tool's types: as strict as the session pattern's zod schema --------------------


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


def _session_id(value: str) -> str:
    return check_id(value)  # one argument: pydantic must not take check_id's second for its info


SessionId = Annotated[StrictText, AfterValidator(_session_id)]


class ToolArguments(BaseModel):
    """The base of :data:`ThinkingInput`: camelCase, strict, closed; ``None`` means absent.

    Types are strict, as the session pattern's zod schema is: ``"3"`` is not a number and ``1`` is
    not a boolean. Unknown keys are refused, so a snake_case spelling is reported rather than
    ignored.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel)

    if TYPE_CHECKING:  # declared below, in the session pattern's order, with the thought's own
        session_id: str | None
        clear_session: bool | None

    def thought_fields(self) -> JsonDict:
        """The thought itself, snake_case, as :meth:`thoughtledger.api.Ledger.think` takes it."""
        return {
            name: value
            for name in THOUGHT_FIELDS
            if (value := getattr(self, name, None)) is not None
        }


_STRICT: dict[type, Any] = {int: StrictCount, bool: StrictFlag, str: StrictText}
"""The in-process tool's strict type for each kind of thought field."""

_SESSION_PATTERN_CORE = ("thought", "next_thought_needed", "thought_number", "total_thoughts")
"""The order the session pattern lists the core fields in; ``sessionId`` follows them, then the
marks (in the definition's order, new ones last) and ``clearSession``."""

_TOOL_OWN: dict[str, tuple[Any, Any]] = {
    "session_id": (
        SessionId | None,
        Field(None, description="Pass existing session ID to continue, or omit for new session"),
    ),
    "clear_session": (
        StrictFlag | None,
        Field(None, description="Set true to reset and start fresh"),
    ),
}


def _thought_field(name: str) -> tuple[Any, Any]:
    """One thought field as the tool takes it: its strict type, the command's bounds, its words."""
    defined = {**ThoughtCore.model_fields, **ThoughtMarks.model_fields}[name]
    rules = ThinkCommand.model_fields[name]  # the command may tighten a field (min_length...)
    kind: Any = rules.annotation
    bounds = list(rules.metadata)
    optional = get_origin(kind) in (Union, types.UnionType)
    if optional:  # X | None, and X may carry its own rules (Count | None)
        [kind] = [option for option in get_args(kind) if option is not type(None)]
        if get_origin(kind) is Annotated:
            kind, *inner = get_args(kind)
            bounds += _bounds(inner)
    strict = _STRICT.get(kind)
    if strict is None:  # a thought field of a new kind: say where its strict type goes
        raise TypeError(f"no strict type for the thought field {name!r} ({kind!r}) in _STRICT")
    # Only the bounds the strict type does not carry already (a count's ``ge=1``).
    carried = _bounds(get_args(strict)[1:])
    bounds = [rule for rule in _bounds(bounds) if rule not in carried]
    typed: Any = Annotated[(strict, *bounds)] if bounds else strict
    if optional:
        return typed | None, Field(None, description=defined.description)
    return typed, Field(description=defined.description)


def _bounds(rules: Iterable[object]) -> list[BaseMetadata]:
    """The bounds (``ge``, ``max_length``...) among a type's rules, also inside ``Field(...)``."""
    found: list[BaseMetadata] = []
    for rule in rules:
        if isinstance(rule, FieldInfo):
            found += _bounds(rule.metadata)
        elif isinstance(rule, BaseMetadata):
            found.append(rule)
    return found


def _fields() -> dict[str, tuple[Any, Any]]:
    own = {**{name: _thought_field(name) for name in THOUGHT_FIELDS}, **_TOOL_OWN}
    fields = [field.name for field in in_order(_SESSION_PATTERN_CORE)]  # the core, then the marks
    order = [*fields[: len(CORE)], "session_id", *fields[len(CORE) :], "clear_session"]
    return {name: own[name] for name in order}


ThinkingInput: type[ToolArguments] = create_model(  # type: ignore[call-overload]
    "ThinkingInput",
    __base__=ToolArguments,
    __module__=__name__,
    __doc__="The in-process tool's arguments, derived from thoughtledger.ledger.thought.",
    **_fields(),
)
"""The tool's arguments, camelCase as in the session pattern (see the module docstring)."""

_ALIASES = {name: field.alias for name, field in ThinkingInput.model_fields.items()}


def parse_arguments(args: Mapping[str, Any] | str) -> ToolArguments:
    """Validate a tool call's arguments (a mapping, or JSON text) into :data:`ThinkingInput`.

    Raises:
        InvalidThoughtError: The text is not JSON, the value not an object, or a field is
            missing, unknown, of the wrong type or out of range; the message names them all.
    """
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            raise InvalidThoughtError(f"invalid thought: arguments are not JSON ({exc})") from exc
    if not isinstance(args, Mapping):
        raise InvalidThoughtError(
            f"invalid thought: arguments must be an object, got {type(args).__name__}"
        )
    try:
        return ThinkingInput.model_validate(dict(args))
    except ValidationError as exc:
        raise InvalidThoughtError(_describe(exc)) from exc


def _describe(error: ValidationError) -> str:
    """One line a model can act on, naming each field by its camelCase name."""
    return "invalid thought: " + describe_errors(error, _wording)


def _wording(item: ErrorDetails) -> str:
    if item["type"] == "missing":
        return "required"
    message = command_wording(item).removeprefix("Value error, ")
    where = ".".join(str(part) for part in item["loc"])
    if item["type"] == "extra_forbidden" and where in _ALIASES:
        message += f"; spell it {_ALIASES[where]}"
    return message


__all__ = ["ThinkingInput", "ToolArguments", "parse_arguments"]
