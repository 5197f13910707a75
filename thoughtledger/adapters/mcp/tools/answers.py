"""The shapes of the tools' answers, published as ``outputSchema``.

The answers themselves are built by the pure views in :mod:`thoughtledger.projections.answers`;
these models only describe them, so the schema a client validates against and the dict we send
cannot drift apart unnoticed (the SDK's client checks every structured answer against the schema,
and so do the tests).
"""

from collections.abc import Collection
from typing import Any, Literal

from pydantic import BaseModel, create_model

from thoughtledger.adapters.common.json_schema import JsonSchema, compact_schema
from thoughtledger.ledger.thought import HistoryItem


class MinimalAnswer(BaseModel):
    """``--profile minimal``: the minimal-response spec's four keys, plus the session's handle."""

    thought: str
    thoughtNumber: int
    totalThoughts: int
    nextThoughtNeeded: bool
    sessionId: str


class OfficialAnswer(BaseModel):
    """``--profile official``: the official server's answer, plus the session's handle."""

    thoughtNumber: int
    totalThoughts: int
    nextThoughtNeeded: bool
    branches: list[str]
    thoughtHistoryLength: int
    sessionId: str


class SessionAnswer(BaseModel):
    """``--profile full``: the session pattern's answer, history and summary included."""

    sessionId: str
    thoughtNumber: int
    totalThoughts: int
    nextThoughtNeeded: bool
    branches: list[str]
    thoughtHistoryLength: int
    # Generated from the definition of a thought: a class to pydantic, a variable to mypy.
    thoughtHistory: list[HistoryItem]  # type: ignore[valid-type]
    summary: str | None = None


class StatusAnswer(BaseModel):
    """``sequential_thinking`` (the MCP API reference): snake_case, a status, ``session_id``."""

    thought_number: int
    total_thoughts: int
    next_thought_needed: bool
    branches: list[str]
    thought_history_length: int
    status: Literal["recorded", "revision", "branch", "complete"]
    session_id: str | None = None


class ExternalAnswer(BaseModel):
    """``sequential_thinking_external`` (the MCP API reference): status plus the thought's content.

    ``model_used`` is present when a model wrote the thought; ``confidence`` and
    ``reasoning_hint`` when it gave them.
    """

    thought_number: int
    total_thoughts: int
    next_thought_needed: bool
    thought_content: str
    branches: list[str]
    thought_history_length: int
    status: Literal["thinking", "revision", "branch", "complete"]
    session_id: str | None = None
    model_used: str | None = None
    confidence: float | None = None
    reasoning_hint: str | None = None


class HistoryAnswer(BaseModel):
    """``thinking_history``: a session read back, whole or as of a version or time."""

    sessionId: str
    status: str
    version: int
    thoughtHistoryLength: int
    asOfVersion: int | None = None
    asOfTime: str | None = None
    branch: str | None = None
    history: list[dict[str, Any]] | None = None
    more: bool | None = None
    nextCursor: str | None = None
    branches: list[dict[str, Any]] | None = None
    view: dict[str, Any] | None = None


def batch_answer(each: type[BaseModel]) -> type[BaseModel]:
    """``sequential_thinking_batch``'s answer: the session, and ``each`` answer in order."""
    model: type[BaseModel] = create_model(
        "BatchAnswer",
        __doc__="sequential_thinking_batch: one answer per thought, as sequentialthinking's.",
        __module__=__name__,
        sessionId=(str, ...),
        answers=(list[each], ...),  # type: ignore[valid-type]  # a class given at run time
    )
    return model


HISTORY_LISTED = ("more", "nextCursor")
"""The optional keys of :class:`HistoryAnswer` its published schema lists: what a model pages
with. The others (the page itself, the bounds echoed back, ``branches``, ``view``) are what the
call asked for, and a schema that does not list a key still allows it."""


class InsightsAnswer(BaseModel):
    """``thinking_insights``: the figures of the caller's past runs, and thoughts a query found."""

    agent: str | None = None
    figures: dict[str, Any]
    found: list[dict[str, Any]] | None = None
    more: bool | None = None


def output_schema(model: type[BaseModel], *, listed: Collection[str] | None = None) -> JsonSchema:
    """Return ``model``'s JSON schema, compacted (see :func:`compact_schema`).

    Args:
        model: The answer's shape.
        listed: Which optional properties to list (``None``: all); the required ones always are.
            The schema does not forbid other keys, so an answer holding them still validates.
    """
    schema: JsonSchema = model.model_json_schema()
    # The class docstring is for us; a model reading the schema needs only the fields.
    schema.pop("description", None)
    if listed is not None:
        keep = {*schema.get("required", ()), *listed}
        schema["properties"] = {
            name: spec for name, spec in schema["properties"].items() if name in keep
        }
    return compact_schema(schema)


__all__ = [
    "HISTORY_LISTED",
    "ExternalAnswer",
    "HistoryAnswer",
    "InsightsAnswer",
    "MinimalAnswer",
    "OfficialAnswer",
    "SessionAnswer",
    "StatusAnswer",
    "batch_answer",
    "output_schema",
]
