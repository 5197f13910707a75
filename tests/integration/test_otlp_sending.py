"""Sending spans honours the OpenTelemetry exporter's settings: headers, compression, retries."""

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from thoughtledger.adapters.otel.exporter import OtlpSender
from thoughtledger.adapters.otel.spans import SpanData
from thoughtledger.api import TelemetryExportError

SPAN = SpanData(
    name="invoke_agent",
    kind="internal",
    trace_id=1 << 100,
    span_id=7,
    parent_span_id=None,
    start_ns=1_000,
    end_ns=2_000,
    attributes={"gen_ai.operation.name": "invoke_agent"},
)


@dataclass
class Seen:
    """Each request's headers and decoded body; the statuses still to answer before a 200."""

    headers: list[dict[str, str]] = field(default_factory=list)
    spans: list[Any] = field(default_factory=list)
    refusals: list[tuple[int, str | None]] = field(default_factory=list)


@contextmanager
def receiver(seen: Seen) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the name http.server calls
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            seen.headers.append({key.lower(): value for key, value in self.headers.items()})
            if seen.refusals:
                status, retry_after = seen.refusals.pop(0)
                self.send_response(status)
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            seen.spans += [
                s for r in request.resource_spans for ss in r.scope_spans for s in ss.spans
            ]
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_headers_and_compression_come_from_the_exporter_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic%20a2V5,x-tenant=t1")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip")
    seen = Seen()
    with receiver(seen) as url:
        OtlpSender(url).send_now([SPAN])
    (headers,) = seen.headers
    assert headers["authorization"] == "Basic a2V5"
    assert headers["x-tenant"] == "t1"
    assert headers["content-encoding"] == "gzip"
    assert headers["content-type"] == "application/x-protobuf"
    assert [span.name for span in seen.spans] == ["invoke_agent"]


def test_a_busy_endpoint_is_tried_again_after_the_wait_it_asks_for() -> None:
    seen = Seen(refusals=[(429, "0"), (503, None)])
    with receiver(seen) as url:
        OtlpSender(url).send_now([SPAN])
    assert len(seen.headers) == 3
    assert [span.name for span in seen.spans] == ["invoke_agent"]


def test_a_refusal_that_retrying_cannot_mend_is_reported_at_once() -> None:
    seen = Seen(refusals=[(400, None)])
    with receiver(seen) as url, pytest.raises(TelemetryExportError) as refused:
        OtlpSender(url).send_now([SPAN])
    assert str(refused.value) == f"{url} did not accept the spans (HTTP 400)"
    assert len(seen.headers) == 1
