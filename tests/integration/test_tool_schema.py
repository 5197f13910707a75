"""The tool's definition and its exports, checked with a JSON Schema validator (and the SDK types).

The schema a model reads and the validation ``execute`` applies must agree: every example below is
judged by both, and both must give the same verdict.
"""

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter

from thoughtledger import InvalidThoughtError, Ledger
from thoughtledger.adapters.mcp.tools.descriptions import COMPACT_DESCRIPTION
from thoughtledger.adapters.tool import (
    DESCRIPTION,
    OUTPUT_SCHEMA,
    PARAMETERS,
    sequential_thinking_tool,
)

pytestmark = pytest.mark.anyio

FIELDS = [
    "thought",
    "nextThoughtNeeded",
    "thoughtNumber",
    "totalThoughts",
    "sessionId",
    "isRevision",
    "revisesThought",
    "branchFromThought",
    "branchId",
    "needsMoreThoughts",
    "clearSession",
]

MINIMAL = {"thought": "t", "thoughtNumber": 1, "totalThoughts": 3, "nextThoughtNeeded": True}
FULL = {
    **MINIMAL,
    "sessionId": "agent-1",
    "isRevision": False,
    "revisesThought": 1,
    "branchFromThought": 1,
    "branchId": "alt",
    "needsMoreThoughts": False,
    "clearSession": False,
}

EXAMPLES: list[tuple[str, dict[str, Any], bool]] = [
    ("minimal", MINIMAL, True),
    ("every field", FULL, True),
    ("a whole number as a float", MINIMAL | {"thoughtNumber": 2.0}, True),
    ("missing thought", {k: v for k, v in MINIMAL.items() if k != "thought"}, False),
    ("missing nextThoughtNeeded", {k: v for k, v in MINIMAL.items() if k[0] != "n"}, False),
    ("empty thought", MINIMAL | {"thought": ""}, False),
    ("thought number 0", MINIMAL | {"thoughtNumber": 0}, False),
    ("a fraction", MINIMAL | {"totalThoughts": 2.5}, False),
    ("a number as text", MINIMAL | {"thoughtNumber": "1"}, False),
    ("a flag as text", MINIMAL | {"nextThoughtNeeded": "true"}, False),
    ("a flag as a number", MINIMAL | {"isRevision": 1}, False),
    ("a long branch id", MINIMAL | {"branchId": "b" * 257}, False),
    ("an unknown field", MINIMAL | {"confidence": 0.9}, False),
    ("a snake_case field", MINIMAL | {"thought_number": 1}, False),
]

ANTHROPIC_TOOL = {
    # The shape of a custom tool in Anthropic's Messages API (its documented name rule included).
    "type": "object",
    "required": ["name", "input_schema"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
        "description": {"type": "string"},
        "input_schema": {
            "type": "object",
            "required": ["type"],
            "properties": {"type": {"const": "object"}},
        },
    },
}


def test_the_parameter_schema_is_valid_json_schema() -> None:
    Draft202012Validator.check_schema(PARAMETERS)
    Draft202012Validator.check_schema(OUTPUT_SCHEMA)


def test_the_parameters_are_001s_in_camel_case_with_001s_words() -> None:
    assert list(PARAMETERS["properties"]) == FIELDS
    assert PARAMETERS["required"] == FIELDS[:4]
    assert PARAMETERS["type"] == "object"
    assert PARAMETERS["additionalProperties"] is False
    described = {name: spec["description"] for name, spec in PARAMETERS["properties"].items()}
    assert described["thought"] == "Your current thinking step"
    assert described["sessionId"] == "Pass existing session ID to continue, or omit for new session"
    assert described["clearSession"] == "Set true to reset and start fresh"
    assert all(described.values())
    # What a model pays tokens for is only what the session pattern says: no Python titles,
    # docstrings or nulls.
    text = json.dumps(PARAMETERS)
    assert "title" not in text
    assert "null" not in text
    assert "ThinkingInput" not in text


def test_the_description_is_the_official_advice_without_the_parameter_list() -> None:
    assert DESCRIPTION.startswith(
        "A detailed tool for dynamic and reflective problem-solving through thoughts.\n"
    )
    # The parameter list moved into the parameters' descriptions (test_provider_limits.py).
    assert "Parameters explained" not in DESCRIPTION
    assert "5. Provide a single, ideally correct answer as the final output\n" in DESCRIPTION
    described = {name: spec["description"] for name, spec in PARAMETERS["properties"].items()}
    assert "false only when truly done" in described["nextThoughtNeeded"]


def test_the_tool_and_the_compact_mcp_tool_share_one_description() -> None:
    compact = COMPACT_DESCRIPTION.removesuffix("; every thought is kept in a session.")
    assert compact == DESCRIPTION.removesuffix(".")


@pytest.mark.parametrize(
    ("arguments", "valid"), [(a, v) for _, a, v in EXAMPLES], ids=[e[0] for e in EXAMPLES]
)
async def test_the_schema_and_execute_agree_on_every_example(
    ledger: Ledger, arguments: dict[str, Any], valid: bool
) -> None:
    schema_says = Draft202012Validator(PARAMETERS).is_valid(arguments)
    try:
        await sequential_thinking_tool(ledger).execute(arguments)
    except InvalidThoughtError:
        execute_says = False
    else:
        execute_says = True
    assert (schema_says, execute_says) == (valid, valid)


async def test_every_answer_matches_the_output_schema(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    validator = Draft202012Validator(OUTPUT_SCHEMA)
    answers = [
        await tool.execute(MINIMAL),
        await tool.execute(MINIMAL | {"thoughtNumber": 2, "isRevision": True, "revisesThought": 1}),
        await tool.execute(MINIMAL | {"thoughtNumber": 3, "branchFromThought": 1, "branchId": "b"}),
        await tool.execute(MINIMAL | {"thoughtNumber": 4, "nextThoughtNeeded": False}),
    ]
    for answer in answers:
        validator.validate(answer)
        assert json.loads(json.dumps(answer)) == answer
    assert set(OUTPUT_SCHEMA["properties"]) == set(answers[-1])


async def test_the_exports_have_each_apis_shape(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    chat, responses, anthropic = (
        tool.to_openai_chat(),
        tool.to_openai_responses(),
        tool.to_anthropic(),
    )
    assert chat == {
        "type": "function",
        "function": {
            "name": "sequentialthinking",
            "description": DESCRIPTION,
            "parameters": PARAMETERS,
        },
    }
    assert responses == {
        "type": "function",
        "name": "sequentialthinking",
        "description": DESCRIPTION,
        "parameters": PARAMETERS,
        "strict": False,
    }
    assert anthropic == {
        "name": "sequentialthinking",
        "description": DESCRIPTION,
        "input_schema": PARAMETERS,
    }
    Draft202012Validator(ANTHROPIC_TOOL).validate(anthropic)
    for exported in (chat["function"]["parameters"], responses["parameters"]):
        Draft202012Validator.check_schema(exported)
    for exported in (chat, responses, anthropic):
        assert json.loads(json.dumps(exported)) == exported


async def test_the_openai_exports_satisfy_the_openai_sdks_types(ledger: Ledger) -> None:
    pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionToolParam

    tool = sequential_thinking_tool(ledger)
    TypeAdapter(ChatCompletionFunctionToolParam).validate_python(tool.to_openai_chat(), strict=True)
    TypeAdapter(FunctionToolParam).validate_python(tool.to_openai_responses(), strict=True)


async def test_changing_an_exported_schema_changes_no_other(ledger: Ledger) -> None:
    tool = sequential_thinking_tool(ledger)
    tool.to_anthropic()["input_schema"]["properties"].clear()
    tool.parameters["required"].append("sessionId")
    assert sequential_thinking_tool(ledger).parameters == PARAMETERS
    assert tool.parameters == PARAMETERS
