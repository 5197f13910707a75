"""What the OTLP receiver refuses, and whom: a clear OTLP error, and nothing appended.

The server runs in a child process; requests are the OpenTelemetry SDK's own (its spans, its
encoder, its exporters) or, for bodies no SDK would send, bytes made to break a rule.
"""

import gzip
import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support.auth import bearer, serving_with_auth
from tests.support.genai_senders import THINKING, pydantic_ai_run
from tests.support.processes import serving_http, sqlite_in
from thoughtledger.adapters.otel.receiver.decode import MAX_BODY_BYTES, MAX_INFLATED_BYTES
from thoughtledger.api import Principal, open_ledger
from thoughtledger.ledger.events import ThoughtCaptured

pytestmark = pytest.mark.anyio

PROTOBUF = {"Content-Type": "application/x-protobuf"}
REASONING = json.dumps(
    [{"role": "assistant", "parts": [{"type": "reasoning", "content": "Check the cache first."}]}]
)


def _spans(*attributes: dict[str, Any]) -> bytes:
    """An export request of one SDK span per mapping of attributes (the SDK's encoder)."""
    kept = InMemorySpanExporter()
    traces = TracerProvider(resource=Resource.create({"service.name": "refusals"}))
    traces.add_span_processor(SimpleSpanProcessor(kept))
    tracer = traces.get_tracer("tests")
    for attrs in attributes:
        with tracer.start_as_current_span("chat m") as span:
            span.set_attributes(attrs)
    body: bytes = encode_spans(kept.get_finished_spans()).SerializeToString()
    traces.shutdown()
    return body


def _base(mcp_url: str) -> str:
    return mcp_url.removesuffix("/mcp")


async def _post(url: str, body: bytes, headers: dict[str, str]) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, content=body, headers=headers)


async def _event_count(db: str) -> int:
    async with open_ledger(db, read_only=True) as ledger:
        return sum(head.version for head in await ledger.all_heads())


def _status(response: httpx2.Response) -> str:
    return str(Status.FromString(response.content).message)


@pytest.mark.parametrize(
    ("body", "headers", "code", "words"),
    [
        (b"\xff\xff\xff not a protobuf", PROTOBUF, 400, "not an OTLP traces request"),
        (b"[1, 2]", {"Content-Type": "application/json"}, 400, "not an OTLP traces request"),
        (b"{}", {"Content-Type": "text/plain"}, 415, "unsupported content type"),
        (b"not gzip", {**PROTOBUF, "Content-Encoding": "gzip"}, 400, "not valid gzip"),
        (b"", {**PROTOBUF, "Content-Encoding": "br"}, 415, "unsupported content encoding"),
    ],
    ids=["garbage", "json-array", "text", "fake-gzip", "brotli"],
)
async def test_a_body_that_is_not_otlp_is_refused_and_appends_nothing(
    tmp_path: Path, body: bytes, headers: dict[str, str], code: int, words: str
) -> None:
    db = sqlite_in(tmp_path)
    async with serving_http(db) as url:
        response = await _post(_base(url) + "/v1/traces", body, headers)
        assert response.status_code == code
        message = (
            json.loads(response.content)["message"]
            if "json" in response.headers["content-type"]
            else _status(response)
        )
        assert words in message
        assert await _event_count(db) == 0


async def test_a_gzip_bomb_and_a_body_over_the_bound_are_refused(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    # A request whose spans carry reasoning, padded to inflate past the bound.
    padded = _spans({"gen_ai.output.messages": REASONING, "pad": "0" * (MAX_INFLATED_BYTES + 1)})
    bomb = gzip.compress(padded, compresslevel=9)
    assert len(bomb) < MAX_BODY_BYTES // 100
    async with serving_http(db) as url:
        traces = _base(url) + "/v1/traces"
        inflated = await _post(traces, bomb, {**PROTOBUF, "Content-Encoding": "gzip"})
        assert inflated.status_code == 413
        assert "inflates past" in _status(inflated)
        oversize = await _post(traces, b"\x00" * (MAX_BODY_BYTES + 1), PROTOBUF)
        assert oversize.status_code == 413
        assert await _event_count(db) == 0


async def test_spans_without_genai_reasoning_are_accepted_ignored_and_counted(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    body = _spans(
        {"http.method": "GET"},
        {"gen_ai.output.messages": REASONING, "gen_ai.conversation.id": "c1"},
        {"db.system": "sqlite"},
    )
    async with serving_http(db) as url:
        response = await _post(_base(url) + "/v1/traces", body, PROTOBUF)
        assert response.status_code == 200
        answer = ExportTraceServiceResponse.FromString(response.content)
        assert answer.partial_success.rejected_spans == 0
        assert "2 of 3 without GenAI reasoning, ignored" in answer.partial_success.error_message
        async with open_ledger(db, read_only=True) as ledger:
            events = [r.event for r in await ledger.events("c1")]
        assert await _event_count(db) == 2  # only the one span's: its session's start, its thought
    [thought] = [e for e in events if isinstance(e, ThoughtCaptured)]
    assert thought.thought == "Check the cache first."


# Events as Claude Code's telemetry sends them (its monitoring documentation's names): what
# an API request cost and which tool ran, never the model's output or its thinking.
CLAUDE_CODE_EVENTS: list[dict[str, Any]] = [
    {
        "event.name": "api_request",
        "session.id": "cc-session",
        "model": "claude-sonnet-4-5",
        "input_tokens": 1200,
        "output_tokens": 300,
        "cost_usd": 0.01,
    },
    {
        "event.name": "tool_result",
        "session.id": "cc-session",
        "tool_name": "Read",
        "success": "true",
        "duration_ms": 12,
    },
]


async def test_the_details_event_sent_as_a_log_record_is_captured_and_other_events_ignored(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    async with serving_http(db) as url:
        logs = LoggerProvider(resource=Resource.create({"service.name": "events"}))
        logs.add_log_record_processor(
            SimpleLogRecordProcessor(OTLPLogExporter(endpoint=_base(url) + "/v1/logs"))
        )
        traces = TracerProvider()
        messages = json.loads(REASONING)

        def emit() -> None:
            with traces.get_tracer("tests").start_as_current_span("chat m"):
                logs.get_logger("tests").emit(
                    event_name="gen_ai.client.inference.operation.details",
                    attributes={
                        "gen_ai.output.messages": messages,
                        "gen_ai.conversation.id": "from-logs",
                    },
                )
            for event in CLAUDE_CODE_EVENTS:
                name = "claude_code." + event["event.name"]
                logs.get_logger("com.anthropic.claude_code.events").emit(
                    event_name=name, body=name, attributes=event
                )
            logs.shutdown()

        await anyio.to_thread.run_sync(emit)
        async with open_ledger(db, read_only=True) as ledger:
            events = [r.event for r in await ledger.events("from-logs")]
        assert await _event_count(db) == 2  # the details event's session: its start, its thought
    [thought] = [e for e in events if isinstance(e, ThoughtCaptured)]
    assert thought.thought == "Check the cache first."


async def test_with_auth_a_token_is_needed_and_a_reader_records_nothing(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path) as server:
        reader = server.mint("rita", "reader")
        body = _spans({"gen_ai.output.messages": REASONING})
        traces = _base(server.url) + "/v1/traces"
        missing = await _post(traces, body, PROTOBUF)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == "Bearer"
        bad = await _post(traces, body, {**PROTOBUF, **bearer("not-a-token")})
        assert bad.status_code == 401
        refused = await _post(traces, body, {**PROTOBUF, **bearer(reader)})
        assert refused.status_code == 403
        assert "reader role" in _status(refused)
        assert await _event_count(server.db) == 0


async def test_another_principals_conversation_id_never_mixes_into_its_session(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path) as server:
        alice, bob = server.mint("alice"), server.mint("bob")
        traces = _base(server.url) + "/v1/traces"
        await anyio.to_thread.run_sync(
            lambda: pydantic_ai_run(traces, token=alice, conversation_id="shared")
        )
        mine = json.dumps(
            [{"role": "assistant", "parts": [{"type": "thinking", "content": "Bob thinks."}]}]
        )
        body = _spans({"gen_ai.output.messages": mine, "gen_ai.conversation.id": "shared"})
        assert (await _post(traces, body, {**PROTOBUF, **bearer(bob)})).status_code == 200
        async with open_ledger(server.db, read_only=True) as ledger:
            as_alice = await ledger.as_principal(Principal("alice")).events("shared")
            as_bob = await ledger.as_principal(Principal("bob")).events("shared")
    alices = [e.event.thought for e in as_alice if isinstance(e.event, ThoughtCaptured)]
    bobs = [e.event.thought for e in as_bob if isinstance(e.event, ThoughtCaptured)]
    assert alices[0] == THINKING
    assert "Bob thinks." not in alices
    assert bobs == ["Bob thinks."]
    assert {as_alice[0].session_id, as_bob[0].session_id} != {"shared"}
    assert as_alice[0].session_id != as_bob[0].session_id


async def test_a_part_that_is_not_text_is_refused_alone_and_counted(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    # Valid OTLP/JSON whose messages (JSON in a string) hold a lone surrogate: not Unicode.
    inner = '[{"role":"assistant","parts":[{"type":"tool_call","name":"x","arguments":"\\ud800"}]}]'
    span = {
        "traceId": "ab" * 16,
        "spanId": "cd" * 8,
        "name": "chat m",
        "attributes": [{"key": "gen_ai.output.messages", "value": {"stringValue": inner}}],
    }
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()
    async with serving_http(db) as url:
        answer = await _post(_base(url) + "/v1/traces", body, {"Content-Type": "application/json"})
        assert answer.status_code == 200
        partial = json.loads(answer.content)["partialSuccess"]
        assert partial["rejectedSpans"] == "1"
        assert "unicode" in partial["errorMessage"].lower()
        assert await _event_count(db) == 0
