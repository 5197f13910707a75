"""A real OTLP/HTTP receiver on loopback: decodes what exporters send with the official messages.

It accepts ``POST /v1/traces`` bodies of ``ExportTraceServiceRequest`` (protobuf, gzip or not),
as a collector does, and keeps every span it was sent, so that tests assert the span tree.
"""

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


@dataclass
class Received:
    """What the receiver was sent: every span, with its resource and scope."""

    spans: list[Span] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    scopes: list[tuple[str, str]] = field(default_factory=list)
    requests: int = 0
    authorizations: list[str | None] = field(default_factory=list)


def value(any_value: AnyValue) -> Any:
    """A protobuf attribute value as plain Python."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(item) for item in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(span: Any) -> dict[str, Any]:
    """A span's (or link's, or resource's) attributes as a dict."""
    return {item.key: value(item.value) for item in span.attributes}


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, Received]]:
    """Run the receiver on a free loopback port; yield its base URL and what it receives."""
    received = Received()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the name http.server calls
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.authorizations.append(self.headers.get("Authorization"))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_error(404)
                return
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            with lock:
                received.requests += 1
                for resource_spans in request.resource_spans:
                    received.resources.append(attributes(resource_spans.resource))
                    for scope_spans in resource_spans.scope_spans:
                        scope = scope_spans.scope
                        received.scopes.append((scope.name, scope_spans.schema_url))
                        received.spans.extend(scope_spans.spans)
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: pytest shows what matters

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
