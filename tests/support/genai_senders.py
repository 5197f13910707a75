"""Senders none of us wrote: real GenAI instrumentation, exporting with the SDK's own OTLP exporter.

Each sender runs its library in this process with a ``TracerProvider`` of its own whose only
processor exports over OTLP/HTTP (protobuf, the SDK's exporter; gzip when asked) to the URL
given, and flushes before returning. What the spans hold is the library's doing, not ours.

- :func:`pydantic_ai_run`: pydantic-ai's instrumentation around a ``FunctionModel`` that thinks
  (``ThinkingPart``), calls a tool, then answers.
- :func:`anthropic_run`: the Anthropic SDK, instrumented by OpenInference or OpenLLMetry,
  against :class:`StubMessages`, a Messages API on loopback answering with a signed thinking
  block, a redacted one, and a tool use.
"""

import asyncio
import base64
import contextlib
import gzip as gzip_module
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import httpx2
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

THINKING = "The user wants the weather in Oslo; I should call the tool first."
AFTER_TOOL = "The tool said it is sunny; a short answer will do."
SIGNED = "The user greets me; keep it short, then look the city up."
SIGNATURE = "EqQBsig-stub=="
REDACTED_DATA = "EmwKAhgBredacted-stub=="
STUB_MODEL = "claude-sonnet-4-5-20250929"
STUB_ID = "msg_stub_1"


class JsonSpanExporter(SpanExporter):
    """OTLP/JSON over HTTP: the SDK's own encoder's request, in OTLP's JSON mapping.

    The SDK's JSON exporter pins other versions of the exporter packages than the protobuf one,
    so the body is the protobuf exporter's request (``encode_spans``) written as OTLP/JSON
    says: protobuf's JSON mapping with trace and span ids as hex.
    """

    def __init__(self, endpoint: str, headers: dict[str, str], *, gzip: bool) -> None:
        self._endpoint = endpoint
        self._headers = {**headers, "Content-Type": "application/json"}
        self._gzip = gzip
        self.statuses: list[int] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """POST ``spans`` as one OTLP/JSON request."""
        tree = MessageToDict(encode_spans(spans))
        _ids_as_hex(tree)
        body = json.dumps(tree).encode()
        headers = dict(self._headers)
        if self._gzip:
            body, headers["Content-Encoding"] = gzip_module.compress(body), "gzip"
        answer = httpx2.post(self._endpoint, content=body, headers=headers, timeout=10)
        self.statuses.append(answer.status_code)
        return SpanExportResult.SUCCESS if answer.is_success else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        """Nothing to release."""


def _ids_as_hex(node: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _ids_as_hex(value)
    elif isinstance(node, list):
        for item in node:
            _ids_as_hex(item)


class Twice(SpanExporter):
    """Sends each batch twice through the same exporter, as a retry after a lost answer does."""

    def __init__(self, exporter: SpanExporter) -> None:
        self._exporter = exporter

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export ``spans``, then the very same spans again."""
        self._exporter.export(spans)
        return self._exporter.export(spans)

    def shutdown(self) -> None:
        """Shut the exporter down."""
        self._exporter.shutdown()


Wire = Literal["protobuf", "json"]


def provider(
    endpoint: str,
    *,
    gzip: bool,
    token: str | None,
    service: str,
    wire: Wire = "protobuf",
    twice: bool = False,
) -> TracerProvider:
    """A tracer provider exporting to ``endpoint``: the SDK's OTLP/HTTP exporter, or JSON."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    exporter: SpanExporter
    if wire == "json":
        exporter = JsonSpanExporter(endpoint, headers, gzip=gzip)
    else:
        exporter = OTLPSpanExporter(
            endpoint=endpoint,
            headers=headers,
            timeout=10,
            compression=Compression.Gzip if gzip else Compression.NoCompression,
        )
    traces = TracerProvider(resource=Resource.create({"service.name": service}))
    traces.add_span_processor(BatchSpanProcessor(Twice(exporter) if twice else exporter))
    return traces


def pydantic_ai_run(
    endpoint: str,
    *,
    gzip: bool = False,
    token: str | None = None,
    conversation_id: str | None = None,
    agent: str = "weather_bot",
    wire: Wire = "protobuf",
    twice: bool = False,
) -> None:
    """Run a pydantic-ai agent that thinks, calls ``get_weather``, thinks again and answers."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ThinkingPart,
        ToolCallPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.usage import RequestUsage

    traces = provider(
        endpoint, gzip=gzip, token=token, service="pydantic-weather", wire=wire, twice=twice
    )

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=10, output_tokens=30, details={"reasoning_tokens": 20})
        if len(messages) > 1:
            thought, answer = ThinkingPart(content=AFTER_TOOL), TextPart("Sunny.")
            return ModelResponse(parts=[thought, answer], usage=usage)
        call = ToolCallPart("get_weather", {"city": "Oslo"}, tool_call_id="call_1")
        return ModelResponse(parts=[ThinkingPart(content=THINKING), call], usage=usage)

    settings = InstrumentationSettings(tracer_provider=traces, include_content=True)
    bot = Agent(FunctionModel(model), name=agent, capabilities=[Instrumentation(settings=settings)])

    @bot.tool_plain
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    # asyncio.run closes its loop (run_sync would leave one behind in this thread).
    asyncio.run(bot.run("What is the weather in Oslo?", conversation_id=conversation_id))
    traces.shutdown()


STUB_MESSAGE: dict[str, Any] = {
    "id": STUB_ID,
    "type": "message",
    "role": "assistant",
    "model": STUB_MODEL,
    "stop_reason": "tool_use",
    "content": [
        {"type": "thinking", "thinking": SIGNED, "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED_DATA},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
    ],
    "usage": {"input_tokens": 10, "output_tokens": 30},
}


@contextmanager
def stub_messages() -> Iterator[str]:
    """A Messages API on loopback answering every request with :data:`STUB_MESSAGE`; its URL."""
    body = json.dumps(STUB_MESSAGE).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the standard library's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def anthropic_run(
    endpoint: str,
    instrumentation: Literal["openinference", "openllmetry"],
    *,
    gzip: bool = False,
    token: str | None = None,
    session_id: str | None = None,
    wire: Wire = "protobuf",
) -> None:
    """One instrumented ``messages.create`` against the stub, its spans exported to ``endpoint``."""
    import anthropic

    service = f"anthropic-{instrumentation}"
    traces = provider(endpoint, gzip=gzip, token=token, service=service, wire=wire)
    instrumentor: Any
    if instrumentation == "openinference":
        from openinference.instrumentation.anthropic import AnthropicInstrumentor

        instrumentor = AnthropicInstrumentor()
    else:
        from opentelemetry.instrumentation.anthropic import (  # type: ignore[attr-defined,unused-ignore]
            AnthropicInstrumentor,
        )

        instrumentor = AnthropicInstrumentor(use_attributes=True)
    instrumentor.instrument(tracer_provider=traces)
    try:
        with stub_messages() as url, contextlib.ExitStack() as stack:
            client = anthropic.Anthropic(base_url=url, api_key="sk-ant-test")
            stack.callback(client.close)

            def ask() -> None:
                client.messages.create(
                    model="claude-sonnet-5-5",
                    max_tokens=2048,
                    thinking={"type": "enabled", "budget_tokens": 1024},
                    messages=[{"role": "user", "content": "weather in Oslo?"}],
                )

            if session_id is not None and instrumentation == "openinference":
                from openinference.instrumentation import using_attributes

                with using_attributes(session_id=session_id):
                    ask()
            else:
                ask()
    finally:
        instrumentor.uninstrument()
        traces.shutdown()


__all__ = [
    "AFTER_TOOL",
    "REDACTED_DATA",
    "SIGNATURE",
    "SIGNED",
    "STUB_ID",
    "STUB_MODEL",
    "THINKING",
    "JsonSpanExporter",
    "Twice",
    "Wire",
    "anthropic_run",
    "provider",
    "pydantic_ai_run",
    "stub_messages",
]
