"""``export --otlp``: sessions as GenAI traces, sent over real OTLP/HTTP to a loopback receiver
that decodes them with the official protobuf messages."""

import asyncio
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import cli, demo, sqlite_url
from tests.support.factories import GENERATION, started, thought
from tests.support.otlp import Received, attributes, otlp_receiver
from tests.support.raw_store import raw_store
from thoughtledger import open_ledger
from thoughtledger.ledger.events import LedgerEvent, ThoughtGenerated

PRIVATE_TEXT = "the model's private reasoning"


async def _model_session(url: str) -> None:
    async with open_ledger(url) as ledger:
        generated = ThoughtGenerated(
            thought=PRIVATE_TEXT,
            thought_number=2,
            total_thoughts=2,
            next_thought_needed=False,
            kind="thought.recorded",
            guidance="go on",
            generation=GENERATION.model_copy(
                update={"model": "gpt-test", "prompt_tokens": 40, "completion_tokens": 12}
            ),
        )
        events: list[LedgerEvent] = [
            started(agent="writer", transport="stdio"),
            thought(1),
            generated,
        ]
        await raw_store(ledger).append("model-s", events, expected_version=0)


@pytest.fixture
def ledger_db(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[str, str]:
    url = sqlite_url(tmp_path / "ledger.db")
    session = demo(capsys, url)
    asyncio.run(_model_session(url))
    return url, session


def _by_id(received: Received) -> dict[bytes, object]:
    return {span.span_id: span for span in received.spans}


def test_each_session_is_one_trace_of_agent_tool_and_chat_spans(
    capsys: pytest.CaptureFixture[str], ledger_db: tuple[str, str]
) -> None:
    url, demo_id = ledger_db
    with otlp_receiver() as (endpoint, received):
        ran = cli(capsys, "export", "--all", "--otlp", endpoint, "--db", url)
    assert ran.code == 0, ran.err
    assert "sent 14 spans of 2 sessions" in ran.out
    traces = {span.trace_id for span in received.spans}
    assert len(traces) == 2
    assert received.scopes[0] == ("thoughtledger", "https://opentelemetry.io/schemas/1.37.0")
    roots = [span for span in received.spans if not span.parent_span_id]
    assert sorted(span.name for span in roots) == [
        "invoke_agent sre-assistant",
        "invoke_agent writer",
    ]
    demo_root = next(span for span in roots if span.name == "invoke_agent sre-assistant")
    root_attributes = attributes(demo_root)
    assert root_attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root_attributes["gen_ai.conversation.id"] == demo_id
    assert root_attributes["session.id"] == demo_id
    assert "gen_ai.provider.name" in root_attributes
    tools = [s for s in received.spans if s.trace_id == demo_root.trace_id and s.parent_span_id]
    assert len(tools) == 9
    assert {s.name for s in tools} == {"execute_tool sequentialthinking"}
    assert all(s.parent_span_id == demo_root.span_id for s in tools)
    assert all(demo_root.start_time_unix_nano <= s.end_time_unix_nano for s in tools)
    by_number = {attributes(s)["thoughtledger.thought_number"]: s for s in tools}
    revision = next(s for s in tools if attributes(s)["thoughtledger.kind"] == "thought.revised")
    assert [link.span_id for link in revision.links] == [by_number[2].span_id]
    opened = [s for s in tools if attributes(s)["thoughtledger.kind"] == "branch.opened"]
    assert len(opened) == 2
    assert all(link.span_id == by_number[3].span_id for s in opened for link in s.links)
    first = attributes(by_number[1])
    assert first["gen_ai.tool.name"] == "sequentialthinking"
    assert len(first["thoughtledger.event.hash"]) == 64
    assert "gen_ai.tool.call.id" in first
    # The model's thought has a chat span under its tool span, with the usage it reported.
    (chat,) = [s for s in received.spans if s.name == "chat gpt-test"]
    chat_attributes = attributes(chat)
    assert (
        chat_attributes["gen_ai.usage.input_tokens"],
        chat_attributes["gen_ai.usage.output_tokens"],
    ) == (40, 12)
    parent = _by_id(received)[chat.parent_span_id]
    assert attributes(parent)["mcp.method.name"] == "tools/call"
    assert "mcp.session.id" in attributes(parent)
    # No thought text unless content capture is switched on.
    assert not any(PRIVATE_TEXT in str(attributes(s)) for s in received.spans)
    assert not any("gen_ai.tool.call.arguments" in attributes(s) for s in received.spans)


def test_exporting_twice_sends_the_same_spans(
    capsys: pytest.CaptureFixture[str], ledger_db: tuple[str, str]
) -> None:
    url, _ = ledger_db
    runs = []
    for _ in range(2):
        with otlp_receiver() as (endpoint, received):
            assert cli(capsys, "export", "--all", "--otlp", endpoint, "--db", url).code == 0
        runs.append(sorted(span.SerializeToString(deterministic=True) for span in received.spans))
    assert runs[0] == runs[1]
    assert len(runs[0]) == 14


def test_content_capture_and_the_latest_conventions_are_chosen_by_the_environment(
    capsys: pytest.CaptureFixture[str],
    ledger_db: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = ledger_db
    with otlp_receiver() as (endpoint, received):
        assert cli(capsys, "export", "model-s", "--otlp", endpoint, "--db", url).code == 0
    assert all(attributes(s).get("gen_ai.system") for s in received.spans if "chat" in s.name)
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "http,gen_ai_latest_experimental")
    with otlp_receiver() as (endpoint, received):
        assert cli(capsys, "export", "model-s", "--otlp", endpoint, "--db", url).code == 0
    (chat,) = [s for s in received.spans if s.name == "chat gpt-test"]
    assert PRIVATE_TEXT in attributes(chat)["gen_ai.output.messages"]
    assert "gen_ai.system" not in attributes(chat)
    assert attributes(chat)["gen_ai.provider.name"] == "local"


def test_a_refused_or_malformed_endpoint_is_one_clear_line(
    capsys: pytest.CaptureFixture[str],
    ledger_db: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = ledger_db
    ran = cli(capsys, "export", "--all", "--otlp", "ftp://nowhere", "--db", url)
    assert ran.code != 0
    assert "http(s) URL" in ran.err
    assert "Traceback" not in ran.err
    with otlp_receiver() as (endpoint, _received):
        ran = cli(capsys, "export", "--all", "--otlp", endpoint + "/wrong/path", "--db", url)
    assert ran.code == 1
    assert ran.err.endswith("did not accept the spans (HTTP 404)\n")
    assert len(ran.err.splitlines()) == 1
    # Nothing listens there: the SDK retries within its timeout, then one line says so.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2")
    with otlp_receiver() as (endpoint, _received):
        closed = endpoint  # stopped when the block ends: its port then refuses connections
    ran = cli(capsys, "export", "--all", "--otlp", closed, "--db", url)
    assert ran.code == 1
    assert ran.err.splitlines() == [
        f"thoughtledger: error: cannot send spans to {closed}/v1/traces (after retrying): "
        "connection refused"
    ]


_DAMAGE = {
    "not JSON": "UPDATE tl_events SET payload = '{not json' WHERE {row}",
    "a field renamed": (
        "UPDATE tl_events SET payload = replace(payload, 'thought_number', 'thought_numbr') "
        "WHERE {row}"
    ),
    "an unknown type": "UPDATE tl_events SET event_type = 'thought.pondered' WHERE {row}",
}


@pytest.mark.parametrize("damage", list(_DAMAGE))
def test_a_damaged_stored_event_stops_the_export_with_one_line(
    capsys: pytest.CaptureFixture[str], ledger_db: tuple[str, str], tmp_path: Path, damage: str
) -> None:
    url, _ = ledger_db
    db = sqlite3.connect(tmp_path / "ledger.db")
    with db:
        db.execute(_DAMAGE[damage].replace("{row}", "session_id = 'model-s' AND version = 2"))
    db.close()
    with otlp_receiver() as (endpoint, received):
        ran = cli(capsys, "export", "--all", "--otlp", endpoint, "--db", url)
    assert ran.code != 0
    assert len(ran.err.splitlines()) == 1, ran.err
    assert "Traceback" not in ran.err
    assert "model-s" not in {attributes(s).get("session.id") for s in received.spans}
