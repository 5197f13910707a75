"""A thought is defined once and validated once on its way in, by every way in.

``thoughtledger.ledger.thought`` names a thought's fields; everything else derives from it: a test
adds a field of each kind (text, count, flag) to the definition in a copy of the package, runs the
tool that regenerates the typed keyword arguments, and finds the field taken by every way in (the
MCP tools, the batch and external ones included, the in-process tool, the Python API) and shown
by every way out (the history, the SQL views on SQLite and PostgreSQL, the CSV, Parquet and JSONL
exports, the browser view's payload, the spans, the language model's prompt, the CLI's tree and
serve's box on stderr), with no other edit. Each way in validates a thought once: the MCP tools
with the SDK's lax arguments model, the in-process tool with its strict one, the Python API with
the command; the command and the event built from it are not validated again, and store the same
bytes as before.
"""

import json
import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import pytest
from mcp import Client
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

import thoughtledger
from tests.support.backends import backend_for
from tests.support.field_probe import REPORT
from tests.support.samples import thought
from tests.support.views import view_column
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


# -- a field added to the definition reaches every way in and out --------------------------------

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "support" / "field_probe.py"
GENERATOR = ROOT / "tools" / "gen_thought_marks.py"

LAST_MARK = '    branch_id: Annotated[str | None, Field(description="Branch identifier")] = None\n'

NEW_FIELDS = [
    pytest.param("hunch_note", "str", "What the thinker suspects", "a hunch", id="str"),
    pytest.param("hunch_count", "Count", "How many hunches the thinker has had", 7, id="int"),
    # False, not True: a value that is given but falsy must not be taken for "not given".
    pytest.param("hunch_held", "bool", "Whether the thinker holds a hunch", False, id="bool"),
]
"""A new optional field of each kind: its name, type, description and the value the probe sends."""

JSON_TYPES = {str: "string", int: "integer", bool: "boolean"}
ARROW_TYPES = {str: "string", int: "int64", bool: "bool"}

MARKED = 7
"""Thoughts the probe records with the field: sequentialthinking, sequential_thinking, two of
sequential_thinking_external (as written, then by the model), one batch, the in-process tool, the
Python API."""


def the_one_edit(name: str, kind: str, words: str) -> str:
    """The line a maintainer appends to ``ThoughtMarks`` for a new optional field."""
    return f'    {name}: Annotated[{kind} | None, Field(description="{words}")] = None\n'


def shown(value: object) -> str:
    """``value`` as a CSV cell holds it (booleans as true/false)."""
    return value if isinstance(value, str) else json.dumps(value)


async def package_with(tmp_path: Path, edit: str) -> dict[str, str]:
    """A copy of the package with ``edit`` appended to the marks, its typed keyword arguments
    regenerated by the tool as a maintainer would; the environment a process runs it in."""
    package = Path(thoughtledger.__file__).parent
    copy = tmp_path / "copy"
    shutil.copytree(package, copy / "thoughtledger", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "tools").mkdir()
    generator = shutil.copy(GENERATOR, copy / "tools")
    definition = copy / "thoughtledger" / "ledger" / "thought.py"
    source = definition.read_text()
    assert source.count(LAST_MARK) == 1
    definition.write_text(source.replace(LAST_MARK, LAST_MARK + edit))  # the one edit
    # The copy first; then this tree, for the probe's test helpers (its package is shadowed).
    path = os.pathsep.join([str(copy), str(ROOT)])
    env = {**os.environ, "PYTHONPATH": path, "DISABLE_THOUGHT_LOGGING": "true"}
    check = [sys.executable, str(generator), "--check"]
    # The checked-in typed arguments are out of date until the tool is run: a test says so.
    stale = await anyio.run_process(check, env=env, check=False)
    assert stale.returncode == 1, stale.stderr.decode()
    await anyio.run_process(check[:2], env=env)
    await anyio.run_process(check, env=env)
    return env


STORAGES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize(("name", "kind", "words", "value"), NEW_FIELDS)
async def test_a_field_added_to_the_definition_reaches_every_way_in_and_out(
    tmp_path: Path, storage: str, name: str, kind: str, words: str, value: object
) -> None:
    env = await package_with(tmp_path, the_one_edit(name, kind, words))
    typed = (tmp_path / "copy" / "thoughtledger" / "ledger" / "thought_marks.py").read_text()
    assert f"    {name}: {type(value).__name__} | None\n" in typed
    camel = to_camel(name)
    async with backend_for(storage, tmp_path) as backend:
        url = backend.url
        assert url is not None
        # A ledger written before the field existed: its views gain the column when next opened.
        async with thoughtledger.open_ledger(url) as ledger:
            before = await ledger.new_session()
            await before.process_sequential_thinking("older", 1, 1, False)
        # Run from tmp_path, not the source tree, whose package would shadow the copy; -P: nor
        # the probe's own folder, whose helpers would shadow libraries (tests/support/mcp.py).
        with anyio.fail_after(120):
            done = await anyio.run_process(
                [sys.executable, "-P", str(PROBE), url, name, json.dumps(value)],
                env=env,
                cwd=tmp_path,
                check=False,
            )
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        out = json.loads((tmp_path / REPORT).read_text())
        column = await view_column(backend, "tl_thoughts", name, "position")

    # Every way in offers it, typed by its kind, in the definition's words.
    for way, schema in out["schemas"].items():
        assert schema is not None, way
        assert schema["description"] == words, way
        assert f'"type": "{JSON_TYPES[type(value)]}"' in json.dumps(schema), (way, schema)
    # Every way in records it, and every read of the ledger gives it back.
    assert [item[camel] for item in out["mcp_history"]] == [value, value]
    assert [item[camel] for item in out["history"]] == [value, value]
    assert out["in_process"][-1][camel] == value
    assert out["api"][-1][camel] == value
    assert out["ui"] == [{camel: value}, {camel: value}]  # the browser view's payload
    assert out["spans"] == [value, value]
    # The SQL views (a column for the ledger written before it too; SQLite's flags are 0/1), and
    # the exports.
    flag = isinstance(value, bool)
    as_stored = [bool(cell) if flag and cell is not None else cell for cell in column]
    assert as_stored == [None] + [value] * MARKED
    assert sorted(out["csv"]) == sorted(["", *[shown(value)] * MARKED])
    assert out["parquet_type"] == ARROW_TYPES[type(value)]
    assert sorted(out["parquet"], key=repr) == sorted([None, *[value] * MARKED], key=repr)
    assert out["jsonl"] == [value] * MARKED
    # What people read: the CLI's tree and page, and serve's box on stderr for each MCP thought.
    noted = f"({camel}: {value})"
    for text in (out["tree"], out["page"]):
        lines = [line for line in text.splitlines() if "official " in line]
        assert len(lines) == 2, text
        assert all(noted in line for line in lines), text
    assert len(out["boxes"]) == 5
    assert all(f"│ {camel}: {value} " in box for box in out["boxes"]), out["boxes"]
    # The language model's prompt: the earlier thought's line, and the thought it is to write.
    [prompt] = out["prompts"]
    worded = f"{name.replace('_', ' ')}: {value}"
    assert f"[1] ({worded}) external 1" in prompt
    assert f"Its marks: {worded}." in prompt
