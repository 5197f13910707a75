"""A thought is defined once and validated once on its way in, by every way in.

``thoughtledger.ledger.thought`` names a thought's fields; the command, every thought event and the
in-process tool derive from it, and the MCP tools, the Python API and the history item, which spell
the fields out, all carry exactly those (a new field that one of them misses fails here, naming the
place to add it). Each way in validates a thought once: the MCP tools with the SDK's lax arguments
model, the in-process tool with its strict one, the Python API with the command; the command and the
event built from it are not validated again, and store the same bytes as before.
"""

import inspect
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel

from tests.support.samples import thought
from thoughtledger.api.facade.service import Ledger
from thoughtledger.api.facade.session import Session
from thoughtledger.api.mcp import create_server
from thoughtledger.api.tool import PARAMETERS, ThinkingInput, sequential_thinking_tool
from thoughtledger.ledger.codec import encode_payload
from thoughtledger.ledger.content import comparable
from thoughtledger.ledger.decide import ThinkCommand, checked_command, decide_thought, parse_command
from thoughtledger.ledger.errors import InvalidThoughtError
from thoughtledger.ledger.events import (
    BranchExtended,
    BranchOpened,
    ThoughtGenerated,
    ThoughtRecorded,
    ThoughtRevised,
)
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.thought import (
    CAMEL_NAMES,
    THOUGHT_FIELDS,
    HistoryItem,
    ThoughtCore,
    ThoughtMarks,
)

pytestmark = pytest.mark.anyio

THOUGHT_EVENTS: tuple[type[BaseModel], ...] = (
    ThoughtRecorded,
    ThoughtRevised,
    BranchOpened,
    BranchExtended,
    ThoughtGenerated,
)
OURS: tuple[type[BaseModel], ...] = (ThinkCommand, *THOUGHT_EVENTS)
"""The models a thought passes through inside the ledger, after its way in."""

SNAKE_TOOLS = ("sequential_thinking", "sequential_thinking_external")

THOUGHT_MODEL_FIELDS = {**ThoughtCore.model_fields, **ThoughtMarks.model_fields}
"""Each field of a thought as ``thoughtledger.ledger.thought`` defines it."""


@pytest.fixture
async def ledger() -> AsyncIterator[Ledger]:
    opened = Ledger(MemoryEventStore())
    try:
        yield opened
    finally:
        await opened.aclose()


@contextmanager
def validations_by(models: tuple[type[BaseModel], ...]) -> Iterator[list[str]]:
    """Record each pydantic validation run by one of ``models`` (the validator's C call)."""
    for model in models:
        model.model_rebuild()  # build deferred validators now, outside the watch
    validators = {id(model.__pydantic_validator__): model.__name__ for model in models}
    seen: list[str] = []

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        if event == "c_call" and getattr(arg, "__name__", "").startswith("validate_"):
            name = validators.get(id(getattr(arg, "__self__", None)))
            if name is not None:
                seen.append(name)

    previous: Callable[..., Any] | None = sys.getprofile()
    sys.setprofile(watch)
    try:
        yield seen
    finally:
        sys.setprofile(previous)


def snake(number: int) -> dict[str, Any]:
    return thought(number, 3)


# -- one definition ---------------------------------------------------------------------------


def test_the_command_and_every_thought_event_carry_exactly_the_defined_fields() -> None:
    for model in OURS:
        assert set(THOUGHT_FIELDS) <= set(model.model_fields), model.__name__
    assert set(ThinkCommand.model_fields) == set(THOUGHT_FIELDS)


def test_the_in_process_tool_offers_every_field_by_its_camel_case_name() -> None:
    offered = set(PARAMETERS["properties"])
    assert set(CAMEL_NAMES.values()) <= offered
    assert offered - set(CAMEL_NAMES.values()) == {"sessionId", "clearSession"}
    assert set(ThinkingInput.model_fields) - set(THOUGHT_FIELDS) == {"session_id", "clear_session"}


def test_the_in_process_tool_takes_each_fields_words_from_its_definition() -> None:
    for name in THOUGHT_FIELDS:
        offered = PARAMETERS["properties"][CAMEL_NAMES[name]]["description"]
        assert offered == THOUGHT_MODEL_FIELDS[name].description, name


def test_the_history_item_shows_every_field_but_the_estimate_and_what_comes_next() -> None:
    shown = {field.alias for field in HistoryItem.model_fields.values()}
    hidden = {CAMEL_NAMES[name] for name in ("total_thoughts", "next_thought_needed")}
    missing = sorted(set(CAMEL_NAMES.values()) - hidden - shown)
    assert missing == [], f"add {missing} to HistoryItem (thoughtledger/ledger/thought.py)"
    # ``redacted`` is no field of a thought: it says a redacted one's text is gone.
    assert shown == set(CAMEL_NAMES.values()) - hidden | {"redacted"}
    assert set(ThoughtCore.model_fields) <= set(THOUGHT_FIELDS)


async def test_every_mcp_thinking_tool_takes_every_field(ledger: Ledger) -> None:
    tools = ("sequentialthinking", *SNAKE_TOOLS)
    async with Client(create_server(ledger, tools=tools)) as client:
        listed = {
            tool.name: tool.input_schema["properties"] for tool in (await client.list_tools()).tools
        }
    where = (
        "add it as a parameter in thoughtledger/api/mcp/thinking.py, its words in descriptions.py"
    )
    missing = [CAMEL_NAMES[n] for n in THOUGHT_FIELDS if CAMEL_NAMES[n] not in listed[tools[0]]]
    assert missing == [], f"sequentialthinking lacks {missing}: {where}"
    for name in SNAKE_TOOLS:
        missing = [field for field in THOUGHT_FIELDS if field not in listed[name]]
        assert missing == [], f"{name} lacks {missing}: {where}"


def test_the_python_api_takes_every_field_by_name() -> None:
    # Its explicit signature is what users call and their editors complete: it is written out.
    taken = inspect.signature(Session.process_sequential_thinking).parameters
    missing = [name for name in THOUGHT_FIELDS if name not in taken]
    assert missing == [], (
        f"add {missing} to Session.process_sequential_thinking (thoughtledger/api/session.py)"
    )
    for name in ThoughtMarks.model_fields:
        assert taken[name].default is None, f"{name} must be optional (default None)"


def a_value_for(name: str) -> object:
    """A valid value of a thought field, by its type (so a new field needs none written here)."""
    annotation = str(THOUGHT_MODEL_FIELDS[name].annotation)
    for kind, value in (("bool", True), ("int", 1), ("str", f"{name} given")):
        if kind in annotation:
            return value
    raise AssertionError(f"no example value for {name}: {annotation}")


async def test_the_python_api_records_every_field_it_is_given(ledger: Ledger) -> None:
    session = await ledger.new_session()
    given = {name: a_value_for(name) for name in THOUGHT_FIELDS}
    await session.process_sequential_thinking(**given)  # type: ignore[arg-type]
    recorded = (await session.events())[-1].event
    assert {name: getattr(recorded, name) for name in THOUGHT_FIELDS} == given


# -- validated once ---------------------------------------------------------------------------


async def test_the_python_api_validates_a_thought_once(ledger: Ledger) -> None:
    session = await ledger.new_session()
    with validations_by(OURS) as seen:
        await session.process_sequential_thinking(
            thought="one", thought_number=1, total_thoughts=2, next_thought_needed=True
        )
    assert seen == ["ThinkCommand"]


async def test_an_mcp_call_is_validated_by_its_arguments_alone(ledger: Ledger) -> None:
    arguments = {"thought": "one", "thoughtNumber": "1", "totalThoughts": 2.0}
    async with Client(create_server(ledger)) as client:
        with validations_by(OURS) as seen:
            result = await client.call_tool(
                "sequentialthinking", {**arguments, "nextThoughtNeeded": "true"}
            )
    assert result.is_error is False
    assert seen == []  # the SDK's lax arguments model was the one validation
    assert result.structured_content is not None
    stored = await ledger.events(result.structured_content["sessionId"])
    [recorded] = [r for r in stored if r.event_type == "thought.recorded"]
    # Payload schema 2: the committed fields, and the text apart under its salt.
    assert comparable(recorded.payload) == (
        '"thought_number":1,"total_thoughts":2,"next_thought_needed":true',
        '"thought":"one"',
    )


async def test_the_in_process_tool_validates_its_arguments_alone(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    with validations_by((ThinkingInput, *OURS)) as seen:
        await tool.execute(
            {"thought": "one", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True}
        )
    assert seen == ["ThinkingInput"]


def test_an_event_decided_from_a_command_is_the_event_validation_would_build() -> None:
    for fields, known in [
        ({**snake(5), "is_revision": True, "revises_thought": 2}, ()),
        ({**snake(2), "branch_from_thought": 1, "branch_id": "b", "needs_more_thoughts": True}, ()),
        ({**snake(3), "branch_from_thought": 1, "branch_id": "b"}, ("b",)),
        (snake(1), ()),
    ]:
        command = parse_command(fields)
        [event] = decide_thought(command, version=1, known_branches=known)
        given = {name: getattr(event, name) for name in event.model_fields_set}
        validated = type(event).model_validate(given)
        assert event == validated
        assert repr(event) == repr(validated)
        # Each encoding draws a fresh salt: all else is the same.
        assert comparable(encode_payload(event)) == comparable(encode_payload(validated))
        assert event.model_fields_set == validated.model_fields_set


# -- the rules the transports' types do not say --------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {**snake(1), "thought": ""},
        {**snake(1), "branch_from_thought": 1, "branch_id": "b" * 257},
        {**snake(1), "thought": "", "branch_id": "b" * 257},
        {**snake(1), "thought": "\u00e9" * 600},
    ],
)
def test_checked_fields_are_refused_in_the_words_of_a_parsed_command(
    fields: dict[str, Any],
) -> None:
    with pytest.raises(InvalidThoughtError) as parsed:
        parse_command(fields, max_thought_bytes=1000)
    with pytest.raises(InvalidThoughtError) as checked:
        checked_command(fields, max_thought_bytes=1000)
    assert str(checked.value) == str(parsed.value)


def test_checked_fields_make_the_command_parsing_makes() -> None:
    fields = {**snake(4), "is_revision": True, "revises_thought": 1}
    assert checked_command(fields) == parse_command(fields)
    assert checked_command(fields).model_fields_set == parse_command(fields).model_fields_set
