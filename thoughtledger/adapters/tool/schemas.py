"""What the in-process tool publishes: its name, description and JSON Schemas (in and out)."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from thoughtledger.adapters.common.json_schema import compact_schema
from thoughtledger.adapters.tool.arguments import ThinkingInput
from thoughtledger.ledger.thought import GUIDANCE, HistoryItem
from thoughtledger.projections.answers import JsonDict


class ThinkingOutput(BaseModel):
    """The session pattern's output schema: what :meth:`.SequentialThinkingTool.execute` returns."""

    model_config = ConfigDict(alias_generator=to_camel)

    session_id: Annotated[str, Field(description="Session ID for next call")]
    thought_number: int
    total_thoughts: int
    next_thought_needed: bool
    thought_history: Annotated[
        # Generated from the definition of a thought: a class to pydantic, a variable to mypy.
        list[HistoryItem],  # type: ignore[valid-type]
        Field(description="Full thought history for context"),
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
"""The JSON Schema (draft 2020-12) of the arguments, generated from :data:`ThinkingInput`."""

OUTPUT_SCHEMA: JsonDict = _schema_of(ThinkingOutput)
"""The JSON Schema of what :meth:`.SequentialThinkingTool.execute` returns."""


TOOL_NAME = "sequentialthinking"
"""The tool's name, as the session pattern registers it (and as the official MCP server names
it)."""

DESCRIPTION = GUIDANCE + "Each parameter's description says how to use it."
"""The tool's description, within every provider's limits."""


__all__ = ["DESCRIPTION", "OUTPUT_SCHEMA", "PARAMETERS", "TOOL_NAME", "ThinkingOutput"]
