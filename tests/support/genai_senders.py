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

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

THINKING = "The user wants the weather in Oslo; I should call the tool first."
AFTER_TOOL = "The tool said it is sunny; a short answer will do."
SIGNED = "The user greets me; keep it short, then look the city up."
SIGNATURE = "EqQBsig-stub=="
REDACTED_DATA = "EmwKAhgBredacted-stub=="
STUB_MODEL = "claude-sonnet-4-5-20250929"
STUB_ID = "msg_stub_1"


def provider(endpoint: str, *, gzip: bool, token: str | None, service: str) -> TracerProvider:
    """A tracer provider exporting to ``endpoint`` with the SDK's OTLP/HTTP (protobuf) exporter."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    exporter = OTLPSpanExporter(
        endpoint=endpoint,
        headers=headers,
        timeout=10,
        compression=Compression.Gzip if gzip else Compression.NoCompression,
    )
    traces = TracerProvider(resource=Resource.create({"service.name": service}))
    traces.add_span_processor(BatchSpanProcessor(exporter))
    return traces


def pydantic_ai_run(
    endpoint: str,
    *,
    gzip: bool = False,
    token: str | None = None,
    conversation_id: str | None = None,
    agent: str = "weather_bot",
) -> None:
    """Run a pydantic-ai agent that thinks, calls ``get_weather``, thinks again and answers."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ThinkingPart
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    traces = provider(endpoint, gzip=gzip, token=token, service="pydantic-weather")

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) > 1:
            return ModelResponse(parts=[ThinkingPart(content=AFTER_TOOL), TextPart("Sunny.")])
        call = ToolCallPart("get_weather", {"city": "Oslo"}, tool_call_id="call_1")
        return ModelResponse(parts=[ThinkingPart(content=THINKING), call])

    settings = InstrumentationSettings(tracer_provider=traces, include_content=True)
    bot = Agent(FunctionModel(model), name=agent, capabilities=[Instrumentation(settings=settings)])

    @bot.tool_plain
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    bot.run_sync("What is the weather in Oslo?", conversation_id=conversation_id)
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
        def do_POST(self) -> None:  # noqa: N802  # the standard library's name
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
) -> None:
    """One instrumented ``messages.create`` against the stub, its spans exported to ``endpoint``."""
    import anthropic

    traces = provider(endpoint, gzip=gzip, token=token, service=f"anthropic-{instrumentation}")
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
        with stub_messages() as url:
            client = anthropic.Anthropic(base_url=url, api_key="sk-ant-test")
            ask = dict(
                model="claude-sonnet-4-5",
                max_tokens=2048,
                thinking={"type": "enabled", "budget_tokens": 1024},
                messages=[{"role": "user", "content": "weather in Oslo?"}],
            )
            if session_id is not None and instrumentation == "openinference":
                from openinference.instrumentation import using_attributes

                with using_attributes(session_id=session_id):
                    client.messages.create(**ask)
            else:
                client.messages.create(**ask)
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
    "anthropic_run",
    "provider",
    "pydantic_ai_run",
    "stub_messages",
]
