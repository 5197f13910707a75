"""The hand-written OTLP encoding says exactly what the SDK's own encoder says, for any session."""

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags

from tests.property.strategies import events
from thoughtledger.adapters.otel.spans import (
    SEMCONV_SCHEMA_URL,
    Conventions,
    SpanData,
    session_spans,
)
from thoughtledger.adapters.otel.wire import encode_request
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import LedgerEvent
from thoughtledger.ledger.store.memory import MemoryEventStore

RESOURCE = {"service.name": "thoughtledger"}


def _records(log: list[LedgerEvent]) -> list[RecordedEvent]:
    async def append() -> list[RecordedEvent]:
        store = MemoryEventStore()
        return await store.append("s", log, expected_version=0)

    return asyncio.run(append())


def _sdk_span(span: SpanData) -> ReadableSpan:
    """The same span as the SDK's own finished span (built here, independently of the product)."""
    flags = TraceFlags(TraceFlags.SAMPLED)

    def context(span_id: int) -> SpanContext:
        return SpanContext(span.trace_id, span_id, is_remote=False, trace_flags=flags)

    kinds = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}
    return ReadableSpan(
        name=span.name,
        context=context(span.span_id),
        parent=None if span.parent_span_id is None else context(span.parent_span_id),
        resource=Resource(RESOURCE),
        attributes={
            k: str(v) if type(v) is int and v >= 1 << 63 else v for k, v in span.attributes.items()
        },
        events=[Event(name, attributes, timestamp=at) for name, at, attributes in span.events],
        links=[Link(context(link.span_id), link.attributes) for link in span.links],
        kind=kinds[span.kind],
        start_time=span.start_ns,
        end_time=span.end_ns,
        instrumentation_scope=InstrumentationScope("thoughtledger", "1.0", SEMCONV_SCHEMA_URL),
    )


def _spans(request: Any) -> list[Any]:
    return [
        span
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(events, min_size=1, max_size=8), st.booleans(), st.booleans())
def test_the_wire_encoding_matches_the_sdk_encoder(
    log: list[LedgerEvent], capture: bool, latest: bool
) -> None:
    spans = session_spans(_records(log), Conventions(capture_content=capture, latest_only=latest))
    ours = ExportTraceServiceRequest()
    ours.ParseFromString(
        encode_request(
            spans,
            resource=RESOURCE,
            scope_name="thoughtledger",
            scope_version="1.0",
            schema_url=SEMCONV_SCHEMA_URL,
        )
    )
    theirs = encode_spans([_sdk_span(span) for span in spans])
    assert _spans(ours) == _spans(theirs)
    (scope_spans,) = [s for r in ours.resource_spans for s in r.scope_spans]
    (expected,) = [s for r in theirs.resource_spans for s in r.scope_spans]
    assert (scope_spans.scope, scope_spans.schema_url) == (expected.scope, expected.schema_url)
