"""Captured actions in the OTLP export: an ``execute_tool {tool}`` span linked to its thought.

Sessions are built by the capture path on every backend and sent over real OTLP/HTTP to a
loopback receiver that decodes them with the official messages: on SQLite and PostgreSQL by
``export --all --otlp``, on the in-memory store (which no command opens) by the same spans
through the same sender.
"""

import anyio
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.support.backends import Backend
from tests.support.cli import cli
from tests.support.otlp import Received, attributes, otlp_receiver
from thoughtledger import Ledger
from thoughtledger.adapters.otel.exporter import OtlpSender, traces_url
from thoughtledger.adapters.otel.spans import CAPTURE_ENV, Conventions, session_spans
from thoughtledger.api import CapturedAction, CapturedReasoning, CapturedSpan

pytestmark = pytest.mark.anyio

ARGUMENTS = '{"path": "cache.py"}'
SPAN = CapturedSpan(
    trace_id="0af7651916cd43dd8448eb211c80319c",
    span_id="b7ad6b7169203331",
    dialect="gen_ai",
    conversation="exported",
    agent="planner",
    model="claude-x",
    parts=(
        CapturedAction("list_files", None, "{}"),
        CapturedReasoning("The cache misses on every cold start; read its key."),
        CapturedAction("read_file", "call_1", ARGUMENTS),
        CapturedReasoning("The key holds the time: that is the miss."),
        CapturedAction("edit_file", "call_2", '{"path": "cache.py", "line": 3}'),
    ),
)


async def exported(backend: Backend, capsys: pytest.CaptureFixture[str]) -> Received:
    """The captured session's spans as a receiver decodes them (content capture on)."""
    ledger = Ledger(await backend.open())
    try:
        await ledger.as_principal(None).capture([SPAN])
        records = await ledger.events("exported")
        marks = await ledger.loops.marks("exported")
    finally:
        await ledger.aclose()
    url = backend.url
    with otlp_receiver() as (endpoint, received):
        if url is None:
            spans = session_spans(records, Conventions.from_env(), marks)
            await anyio.to_thread.run_sync(OtlpSender(traces_url(endpoint)).send_now, spans)
        else:
            ran = await anyio.to_thread.run_sync(
                lambda: cli(capsys, "export", "--all", "--otlp", endpoint, "--db", url)
            )
            assert ran.code == 0, ran.err
    return received


async def test_each_action_is_an_execute_tool_span_linked_to_the_thought_it_followed(
    backend: Backend, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "true")

    received = await exported(backend, capsys)

    by_kind: dict[str, list[Span]] = {}
    for span in received.spans:
        by_kind.setdefault(attributes(span).get("thoughtledger.kind", "root"), []).append(span)
    [root] = by_kind["root"]
    actions = by_kind["action.taken"]
    thought = {
        attributes(s)["thoughtledger.thought_number"]: s for s in by_kind["thought.captured"]
    }
    assert [s.name for s in actions] == [
        "execute_tool list_files",
        "execute_tool read_file",
        "execute_tool edit_file",
    ]
    assert all(s.parent_span_id == root.span_id for s in actions)
    assert [[link.span_id for link in s.links] for s in actions] == [
        [],
        [thought[1].span_id],
        [thought[2].span_id],
    ]
    first, read, _ = (attributes(s) for s in actions)
    assert (read["gen_ai.operation.name"], read["gen_ai.tool.name"]) == (
        "execute_tool",
        "read_file",
    )
    assert (read["gen_ai.tool.call.id"], read["gen_ai.tool.call.arguments"]) == (
        "call_1",
        ARGUMENTS,
    )
    assert read["thoughtledger.action.after_thought"] == 1
    assert (read["thoughtledger.action.trace_id"], read["thoughtledger.action.span_id"]) == (
        SPAN.trace_id,
        SPAN.span_id,
    )
    assert "gen_ai.tool.call.id" not in first
    assert "thoughtledger.action.after_thought" not in first


async def test_an_actions_arguments_are_sent_only_when_content_is_captured(
    backend: Backend, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CAPTURE_ENV, raising=False)

    received = await exported(backend, capsys)

    actions = [
        s
        for s in received.spans
        if s.name.startswith("execute_tool ") and "sequential" not in s.name
    ]
    assert len(actions) == 3
    assert not any("gen_ai.tool.call.arguments" in attributes(s) for s in actions)
    assert not any("cache.py" in str(attributes(s)) for s in received.spans)
