"""A thought is defined once and validated once on its way in, by every way in.

``thoughtledger.ledger.thought`` names a thought's fields; everything else derives from it: a test
adds a field to the definition in a copy of the package and finds it in the MCP schema, the
history, the SQL views, the exports, the browser view's payload and the spans, with no other
edit. Each way in validates a thought once: the MCP tools with the SDK's lax arguments
model, the in-process tool with its strict one, the Python API with the command; the command and the
event built from it are not validated again, and store the same bytes as before.
"""

import json
import os
import shutil
import sys
import textwrap
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import pytest
from mcp import Client
from pydantic import BaseModel

import thoughtledger
from tests.support.samples import thought
from thoughtledger.adapters.mcp import create_server
from thoughtledger.adapters.tool import PARAMETERS, ThinkingInput, sequential_thinking_tool
from thoughtledger.api.service import Ledger
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


# -- validated once by each model ------------------------------------------------------------
# Re-validating a checked thought in pydantic-core costs less than building the models without
# validation (model_construct's loop in Python): measured 37-41 against 41-43 us a thought through
# the facade. So the command and the event each validate it, once; no model validates it twice.


async def test_the_python_api_validates_a_thought_once_per_model(ledger: Ledger) -> None:
    session = await ledger.new_session()
    with validations_by(OURS) as seen:
        await session.process_sequential_thinking(
            thought="one", thought_number=1, total_thoughts=2, next_thought_needed=True
        )
    assert seen == ["ThinkCommand", "ThoughtRecorded"]


async def test_an_mcp_call_is_validated_once_per_model(ledger: Ledger) -> None:
    arguments = {"thought": "one", "thoughtNumber": "1", "totalThoughts": 2.0}
    async with Client(create_server(ledger)) as client:
        with validations_by(OURS) as seen:
            result = await client.call_tool(
                "sequentialthinking", {**arguments, "nextThoughtNeeded": "true"}
            )
    assert result.is_error is False
    assert seen == ["ThinkCommand", "ThoughtRecorded"]  # after the SDK's lax arguments model
    assert result.structured_content is not None
    stored = await ledger.events(result.structured_content["sessionId"])
    [recorded] = [r for r in stored if r.event_type == "thought.recorded"]
    # Payload schema 2: the committed fields, and the text apart under its salt.
    assert comparable(recorded.payload) == (
        '"thought_number":1,"total_thoughts":2,"next_thought_needed":true',
        '"thought":"one"',
    )


async def test_the_in_process_tool_validates_once_per_model(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    with validations_by((ThinkingInput, *OURS)) as seen:
        await tool.execute(
            {"thought": "one", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True}
        )
    assert seen == ["ThinkingInput", "ThinkCommand", "ThoughtRecorded"]


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


# -- a field added to the definition reaches every way out ----------------------------------------

NEW_FIELD = (
    '    hunch_note: Annotated[str | None, Field(description="What the thinker suspects")] = None\n'
)
"""The one line a maintainer adds to ``ThoughtMarks`` for a new optional field."""

LAST_MARK = '    branch_id: Annotated[str | None, Field(description="Branch identifier")] = None\n'

SCRIPT = textwrap.dedent(
    """
    import asyncio, csv, io, json, sqlite3, subprocess, sys
    from mcp import Client
    from thoughtledger import open_ledger
    from thoughtledger.adapters.mcp import create_server
    from thoughtledger.adapters.otel.spans import Conventions, session_spans
    from thoughtledger.adapters.ui.payload import event_json

    url = sys.argv[1]
    THOUGHT = {"thought": "t", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True}

    async def main():
        out = {}
        async with open_ledger(url) as ledger:
            server = create_server(ledger, tools=["sequentialthinking", "thinking_history",
                                                  "sequential_thinking"])
            async with Client(server) as client:
                tools = {t.name: t.input_schema["properties"] for t in
                         (await client.list_tools()).tools}
                out["schema"] = {name: sorted(p) for name, p in tools.items()}
                out["words"] = tools["sequentialthinking"]["hunchNote"]["description"]
                done = await client.call_tool("sequentialthinking", {**THOUGHT,
                                              "hunchNote": "a hunch"})
                session_id = done.structured_content["sessionId"]
                await client.call_tool("sequential_thinking", {"thought": "u",
                    "thought_number": 1, "total_thoughts": 1, "next_thought_needed": False,
                    "hunch_note": "snake", "session_id": "snake"})
                read = await client.call_tool("thinking_history", {"sessionId": session_id})
                out["mcp_history"] = read.structured_content["history"]
            page = await ledger.history(session_id)
            out["history"] = list(page.items)
            session = await ledger.new_session()
            await session.process_sequential_thinking("v", 1, 1, False, hunch_note="by api")
            out["api"] = (await session.history())[-1]
            records = await ledger.events(session_id)
            out["ui"] = [event_json(r) for r in records][-1]
            spans = session_spans(records, Conventions())
            out["spans"] = [dict(s.attributes) for s in spans]
        return out

    out = asyncio.run(main())
    path = url.removeprefix("sqlite:///")
    db = sqlite3.connect(path)
    view = db.execute("SELECT hunch_note FROM tl_thoughts ORDER BY position")
    out["view"] = [row[0] for row in view]
    cli = [sys.executable, "-m", "thoughtledger.adapters.cli", "export", "--db", url, "--all",
    "-o", "-"]
    out["csv"] = list(csv.DictReader(io.StringIO(subprocess.run(
        [*cli, "--format", "csv"], check=True, capture_output=True, text=True).stdout)))
    out["jsonl"] = subprocess.run(cli, check=True, capture_output=True, text=True).stdout
    print(json.dumps(out))
    """
)


async def test_a_field_added_to_the_definition_reaches_every_way_out(tmp_path: Path) -> None:
    package = Path(thoughtledger.__file__).parent
    copy = tmp_path / "copy"
    shutil.copytree(package, copy / "thoughtledger", ignore=shutil.ignore_patterns("__pycache__"))
    definition = copy / "thoughtledger" / "ledger" / "thought.py"
    source = definition.read_text()
    assert source.count(LAST_MARK) == 1
    definition.write_text(source.replace(LAST_MARK, LAST_MARK + NEW_FIELD))  # the one edit
    # A ledger written before the field existed: its views gain the column when next opened.
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    async with thoughtledger.open_ledger(url) as ledger:
        before = await ledger.new_session()
        await before.process_sequential_thinking("older", 1, 1, False)
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(copy), "DISABLE_THOUGHT_LOGGING": "true"}
    # Run from tmp_path, not the source tree, whose package would shadow the copy.
    with anyio.fail_after(120):
        done = await anyio.run_process(
            [sys.executable, str(script), url], env=env, cwd=tmp_path, check=False
        )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    out = json.loads(done.stdout)

    assert "hunchNote" in out["schema"]["sequentialthinking"]
    assert "hunch_note" in out["schema"]["sequential_thinking"]
    assert out["words"] == "What the thinker suspects"
    assert out["mcp_history"][0]["hunchNote"] == "a hunch"
    assert out["history"][0]["hunchNote"] == "a hunch"
    assert out["api"]["hunchNote"] == "by api"
    assert out["view"] == [None, "a hunch", "snake", "by api"]
    assert [row["hunch_note"] for row in out["csv"]] == ["", "a hunch", "snake", "by api"]
    lines = [json.loads(line) for line in out["jsonl"].splitlines()]
    payloads = [json.loads(line["payload"]) for line in lines if "payload" in line]
    given = sorted(p["hunch_note"] for p in payloads if "hunch_note" in p)
    assert given == ["a hunch", "by api", "snake"]  # sessions in the export's own order
    assert out["ui"]["f"] == {"hunchNote": "a hunch"}
    assert {"thoughtledger.hunch_note": "a hunch"}.items() <= out["spans"][-1].items()
