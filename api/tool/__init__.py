"""The in-process tool (the session pattern): sequential thinking for Python agents, no MCP.

One :class:`SequentialThinkingTool` is what the session pattern calls a tool made by the factory: a
``name``, a ``description``, a JSON Schema of its ``parameters`` and an async ``execute`` that
records the thought in the ledger and answers with the session pattern's view. Each instance is one
agent's line of
thought: it remembers the session it is in, so an agent loop needs to pass nothing back; several
instances in one process share nothing but the ledger. Example::

    tool = sequential_thinking_tool(ledger)
    answer = await tool.execute({"thought": "Map the failure modes", "thoughtNumber": 1,
                                 "totalThoughts": 3, "nextThoughtNeeded": True})
    answer["sessionId"]  # the same id on every later call, until the agent clears the session

Agent code that builds its own requests takes the definition from ``to_openai_chat()``,
``to_openai_responses()`` or ``to_anthropic()``; framework tool objects come from
:mod:`api.tool.adapters`.
"""

import asyncio
import copy
import json
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from api.json_schema import compact_schema
from api.service import Ledger
from ledger.decide import MAX_BRANCH_ID_CHARS, checked_command
from ledger.errors import InvalidInputError, InvalidThoughtError
from ledger.ids import check_id
from ledger.thought import THOUGHT_FIELDS, HistoryItem
from ledger.thought_types import (
    StrictCount,
    StrictFlag,
    StrictText,
    command_wording,
    describe_errors,
)
from projections.views import JsonDict, session_view

TOOL_NAME = "sequentialthinking"
"""The tool's name, as the session pattern registers it (and as the official MCP server names
it)."""

DESCRIPTION = """\
A detailed tool for dynamic and reflective problem-solving through thoughts.
This tool helps analyze problems through a flexible thinking process that can adapt and evolve.
Each thought can build on, question, or revise previous insights as understanding deepens.

When to use this tool:
- Breaking down complex problems into steps
- Planning and design with room for revision
- Analysis that might need course correction
- Problems where the full scope might not be clear initially
- Tasks that need to maintain context over multiple steps

You should:
1. Start with an initial estimate of needed thoughts, but be ready to adjust
2. Feel free to question or revise previous thoughts, or branch to explore alternatives
3. Express uncertainty when present
4. Ignore information that is irrelevant to the current step
5. Only set nextThoughtNeeded to false when truly done

Each parameter's description says how to use it."""
"""The tool's description: the session pattern's words, within every provider's limits.

OpenAI refuses a function description over 1,024 characters (``string_above_max_length``), and
the session pattern's full text has 1,879. What its "Parameters explained" list and its advice
about particular parameters said now lives in those parameters' descriptions (see
:class:`ThinkingInput`), so a model still reads all of it, next to the field it concerns.
"""


def _session_id(value: str) -> str:
    return check_id(value)  # one argument: pydantic must not take check_id's second for its info


SessionId = Annotated[StrictText, AfterValidator(_session_id)]


class ThinkingInput(BaseModel):
    """The tool's arguments, camelCase as in the session pattern; ``None`` means absent.

    Types are strict, as the session pattern's zod schema is: ``"3"`` is not a number and ``1`` is
    not a boolean. Unknown keys are refused, so a snake_case spelling is reported rather than
    ignored.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel)

    thought: Annotated[StrictText, Field(min_length=1, description="Your current thinking step")]
    next_thought_needed: Annotated[
        StrictFlag,
        Field(
            description="Whether another thought step is needed: true if you need more "
            "thinking, even at what seemed like the end; false only when truly done"
        ),
    ]
    thought_number: Annotated[
        StrictCount,
        Field(description="Current thought number (e.g., 1, 2, 3); it can go beyond the total"),
    ]
    total_thoughts: Annotated[
        StrictCount,
        Field(
            description="Estimated total thoughts needed (e.g., 5, 10); adjust it up or down "
            "as you progress"
        ),
    ]
    session_id: Annotated[
        SessionId | None,
        Field(description="Pass existing session ID to continue, or omit for new session"),
    ] = None
    is_revision: Annotated[
        StrictFlag | None,
        Field(description="Whether this revises previous thinking (say which in revisesThought)"),
    ] = None
    revises_thought: Annotated[
        StrictCount | None, Field(description="Which thought number is being reconsidered")
    ] = None
    branch_from_thought: Annotated[
        StrictCount | None,
        Field(
            description="Branching point thought number, to explore an alternative path (name "
            "the branch in branchId)"
        ),
    ] = None
    branch_id: Annotated[
        StrictText | None, Field(max_length=MAX_BRANCH_ID_CHARS, description="Branch identifier")
    ] = None
    needs_more_thoughts: Annotated[
        StrictFlag | None,
        Field(description="If more thoughts are needed, even after what seemed like the end"),
    ] = None
    clear_session: Annotated[
        StrictFlag | None, Field(description="Set true to reset and start fresh")
    ] = None

    def thought_fields(self) -> JsonDict:
        """The thought itself, snake_case, as :meth:`api.service.Ledger.think` takes it."""
        return {
            name: value
            for name in THOUGHT_FIELDS
            if (value := getattr(self, name, None)) is not None
        }


class ThinkingOutput(BaseModel):
    """The session pattern's output schema: what :meth:`SequentialThinkingTool.execute` returns."""

    model_config = ConfigDict(alias_generator=to_camel)

    session_id: Annotated[str, Field(description="Session ID for next call")]
    thought_number: int
    total_thoughts: int
    next_thought_needed: bool
    thought_history: Annotated[
        list[HistoryItem], Field(description="Full thought history for context")
    ]
    branches: Annotated[list[str], Field(description="Active branch IDs")]
    thought_history_length: Annotated[int, Field(description="Total thoughts in session")]
    summary: Annotated[str | None, Field(description="Optional summary of thinking so far")] = None


def _schema_of(model: type[BaseModel]) -> JsonDict:
    # As the session pattern's zod schema reads: optional is optional, no titles (see
    # compact_schema); class titles and docstrings speak to Python developers, not to the model.
    schema = compact_schema(model.model_json_schema(by_alias=True), sorted_keywords=True)
    for part in (schema, *schema.get("$defs", {}).values()):
        part.pop("title", None)
        part.pop("description", None)
    return schema


PARAMETERS: JsonDict = _schema_of(ThinkingInput)
"""The JSON Schema (draft 2020-12) of the arguments, generated from :class:`ThinkingInput`."""

OUTPUT_SCHEMA: JsonDict = _schema_of(ThinkingOutput)
"""The JSON Schema of what :meth:`SequentialThinkingTool.execute` returns."""

_ALIASES = {name: field.alias for name, field in ThinkingInput.model_fields.items()}


class SequentialThinkingTool:
    """The sequential-thinking tool over a ledger, for one agent (see the module docstring).

    Which session a call continues: the id bound at creation, when there is one (it wins over a
    ``sessionId`` argument, as in the session pattern); else the call's ``sessionId``; else the
    session this instance was last in; else a new one. After the call the instance is in the session
    the thought landed in, which is a new one after ``clearSession`` or an expiry, so a bound
    instance follows its work to the new id too. Calls on one instance run one at a time: a
    session is a sequence, and two first calls at once must not open two sessions.

    Args:
        ledger: Where thoughts are recorded.
        session_id: The session to bind (the caller owns it: a parent passes its own down, or an
            agent its stable id); ``None`` lets the first call start one.
        history_window: Keep only the last N thoughts in ``thoughtHistory`` (``None``: all, as
            the session pattern); ``thoughtHistoryLength`` counts every thought, and the ledger
            keeps them all.
        metadata: Facts recorded when a session starts here (``agent``, ``run``...).

    Raises:
        InvalidInputError: ``session_id`` is malformed or ``history_window`` is not a whole
            number of at least 1.
    """

    name: str = TOOL_NAME
    description: str = DESCRIPTION

    def __init__(
        self,
        ledger: Ledger,
        session_id: str | None = None,
        *,
        history_window: int | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        if history_window is not None and (
            isinstance(history_window, bool)
            or not isinstance(history_window, int)
            or history_window < 1
        ):
            raise InvalidInputError(
                f"history_window must be a whole number of at least 1, got {history_window!r}"
            )
        self._ledger = ledger
        self._bound = session_id is not None
        self._session_id = check_id(session_id) if session_id is not None else None
        self._history_window = history_window
        self._metadata = {"tool": TOOL_NAME, "transport": "in-process", **(metadata or {})}
        self._turn = asyncio.Lock()

    @property
    def parameters(self) -> JsonDict:
        """The JSON Schema of the arguments (a fresh copy: callers may adapt it freely)."""
        return copy.deepcopy(PARAMETERS)

    @property
    def output_schema(self) -> JsonDict:
        """The JSON Schema of :meth:`execute`'s answer (a fresh copy)."""
        return copy.deepcopy(OUTPUT_SCHEMA)

    @property
    def session_id(self) -> str | None:
        """The session this instance is in: bound or last used; ``None`` before the first call."""
        return self._session_id

    async def execute(self, args: Mapping[str, Any] | str) -> JsonDict:
        """Record one thought and answer with the session pattern's view.

        Args:
            args: The tool call's arguments, as a mapping or as the JSON text a model sent.

        Returns:
            ``sessionId, thoughtNumber, totalThoughts, nextThoughtNeeded, thoughtHistory,
            branches, thoughtHistoryLength`` and, once no thought is needed, ``summary``.

        Raises:
            InvalidThoughtError: (a ``ValueError``) the arguments are not valid; the message
                names each camelCase field at fault, and nothing was recorded.
            StoreError: The store failed; nothing was recorded.
        """
        given = parse_arguments(args)
        async with self._turn:
            target = self._session_id
            if not self._bound and given.session_id is not None:
                target = given.session_id
            outcome = await self._ledger.think(
                target,
                checked_command(
                    given.thought_fields(), max_thought_bytes=self._ledger.max_thought_bytes
                ),
                clear=bool(given.clear_session),
                metadata=self._metadata,
            )
            self._session_id = outcome.session_id
        return session_view(outcome.state, history_window=self._history_window)

    def to_openai_chat(self) -> JsonDict:
        """The tool for OpenAI Chat Completions: ``{"type": "function", "function": {...}}``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def to_openai_responses(self) -> JsonDict:
        """The tool for the OpenAI Responses API (flat, ``strict`` off).

        The Responses API makes function tools strict unless told otherwise, and strict mode
        wants every property required; the session pattern's optional properties are optional.
        """
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "strict": False,
        }

    def to_anthropic(self) -> JsonDict:
        """The tool for the Anthropic Messages API: ``{name, description, input_schema}``."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.parameters,
        }


def sequential_thinking_tool(
    ledger: Ledger,
    session_id: str | None = None,
    *,
    history_window: int | None = None,
    metadata: Mapping[str, str] | None = None,
) -> SequentialThinkingTool:
    """Make a sequential-thinking tool for one agent.

    The session pattern's ``createSequentialThinkingTool``.

    Args:
        ledger: Where thoughts are recorded.
        session_id: A session to bind: it wins over any ``sessionId`` argument.
        history_window: Keep only the last N thoughts in each answer's ``thoughtHistory``.
        metadata: Facts recorded when a session starts through this tool.

    Returns:
        A new tool, sharing nothing with any other but the ledger.

    Raises:
        InvalidInputError: ``session_id`` is malformed or ``history_window`` is below 1.
    """
    return SequentialThinkingTool(
        ledger, session_id, history_window=history_window, metadata=metadata
    )


def parse_arguments(args: Mapping[str, Any] | str) -> ThinkingInput:
    """Validate a tool call's arguments (a mapping, or JSON text) into :class:`ThinkingInput`.

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


__all__ = [
    "DESCRIPTION",
    "OUTPUT_SCHEMA",
    "PARAMETERS",
    "TOOL_NAME",
    "SequentialThinkingTool",
    "ThinkingInput",
    "ThinkingOutput",
    "parse_arguments",
    "sequential_thinking_tool",
]
