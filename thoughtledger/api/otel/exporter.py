"""Sending spans over OTLP/HTTP (protobuf) with the OpenTelemetry SDK (the ``otel`` extra).

The only module that imports OpenTelemetry, and only when an export runs
(``pip install 'thoughtledger[otel]'``). The SDK's OTLP/HTTP exporter does the sending: its
endpoint, headers (``OTEL_EXPORTER_OTLP_HEADERS``, how Langfuse takes its keys), compression,
timeouts and retries (429 and 5xx, honouring ``Retry-After``). The request body is encoded by
:mod:`thoughtledger.api.otel.wire`, three to four times faster than the SDK's message objects, and
handed to the exporter's HTTP client; should a later SDK not have that client, spans go through the
exporter's public ``export`` as the SDK's own finished spans instead (the same request, slower). Ids
and times are the ledger's, never the SDK's. Sending blocks, so it runs in a worker thread.
"""

import asyncio
import logging
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from thoughtledger.api import TelemetryExportError
from thoughtledger.api.otel.spans import SEMCONV_SCHEMA_URL, SpanData
from thoughtledger.api.otel.wire import encode_span, request_of
from thoughtledger.ledger.errors import InvalidInputError, MissingExtraError

BATCH = 2048
"""Spans per request: large enough to keep the per-request cost small, small enough to stay
well under receivers' request limits (Langfuse and Phoenix take a few MB)."""


def traces_url(given: str) -> str:
    """Return the OTLP/HTTP traces endpoint for ``given`` (a base URL gets ``/v1/traces``).

    Raises:
        InvalidInputError: ``given`` is not an http(s) URL.
    """
    parts = urlsplit(given)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInputError(
            f"--otlp needs an http(s) URL such as http://localhost:4318, not {given!r}"
        )
    if parts.path in ("", "/"):
        return given.rstrip("/") + "/v1/traces"
    return given


class OtlpSender:
    """Converts spans to the SDK's and sends them to one endpoint.

    Raises:
        MissingExtraError: OpenTelemetry is not installed (names the extra).
    """

    def __init__(self, url: str, *, service_name: str = "thoughtledger", version: str = "") -> None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import Event, ReadableSpan
            from opentelemetry.sdk.trace.export import SpanExportResult
            from opentelemetry.sdk.util.instrumentation import InstrumentationScope
            from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags
        except ImportError as exc:
            raise MissingExtraError(
                "OpenTelemetry export needs the otel extra; install it with "
                "pip install 'thoughtledger[otel]'"
            ) from exc
        self._url = url
        # Timeout, headers and compression from the SDK's own settings (OTEL_EXPORTER_OTLP_*).
        self._exporter = OTLPSpanExporter(endpoint=url)
        # The SDK logs each retry; our caller reports the outcome in one line instead.
        logging.getLogger("opentelemetry.exporter").setLevel(logging.CRITICAL)
        self._ok = SpanExportResult.SUCCESS
        self._resource = Resource.create({"service.name": service_name})
        self._scope = InstrumentationScope("thoughtledger", version, SEMCONV_SCHEMA_URL)
        self._version = version
        client = getattr(self._exporter, "_client", None)
        self._client = client if callable(getattr(client, "export", None)) else None
        self._sdk: Any = (ReadableSpan, SpanContext, TraceFlags(TraceFlags.SAMPLED), Link, Event)
        self._kinds = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}

    def _convert(self, span: SpanData) -> Any:
        readable, context, flags, link, event = self._sdk

        def ctx(span_id: int) -> Any:
            return context(span.trace_id, span_id, is_remote=False, trace_flags=flags)

        return readable(
            name=span.name,
            context=ctx(span.span_id),
            parent=None if span.parent_span_id is None else ctx(span.parent_span_id),
            resource=self._resource,
            attributes=span.attributes,
            events=[event(name, attributes, timestamp=at) for name, at, attributes in span.events],
            links=[link(ctx(target.span_id), target.attributes) for target in span.links],
            kind=self._kinds[span.kind],
            start_time=span.start_ns,
            end_time=span.end_ns,
            instrumentation_scope=self._scope,
        )

    def send_now(self, spans: Sequence[SpanData]) -> None:
        """Send ``spans`` in batches, blocking until each is accepted.

        Raises:
            TelemetryExportError: The endpoint refused a batch or could not be reached.
        """
        self.send_encoded_now(self.encode(spans))

    def encode(self, spans: Sequence[SpanData]) -> list[Any]:
        """Return each span ready to send (for :meth:`send_encoded`).

        Its encoded ``Span`` message, or, where the SDK's HTTP client is not at hand, the SDK's
        own finished span.
        """
        if self._client is None:
            return [self._convert(span) for span in spans]
        return [encode_span(span) for span in spans]

    def send_encoded_now(self, encoded: Sequence[Any]) -> None:
        """Send spans made ready by :meth:`encode` in batches, blocking until each is accepted.

        Raises:
            TelemetryExportError: The endpoint refused a batch or could not be reached.
        """
        for start in range(0, len(encoded), BATCH):
            batch = encoded[start : start + BATCH]
            try:
                refusal = self._send_batch(batch)
            except Exception as exc:  # the SDK retries, then may raise anything requests does
                raise TelemetryExportError(f"cannot send spans to {self._url}: {exc}") from exc
            if refusal is not None:
                raise TelemetryExportError(refusal)

    def _send_batch(self, batch: Sequence[Any]) -> str | None:
        """Send one batch; return why it was not accepted, or ``None``."""
        if self._client is None:
            result = self._exporter.export(batch)
            return None if result == self._ok else f"{self._url} did not accept the spans"
        body = request_of(
            batch,
            resource=dict(self._resource.attributes),
            scope_name="thoughtledger",
            scope_version=self._version,
            schema_url=SEMCONV_SCHEMA_URL,
        )
        outcome = self._client.export(body)
        if outcome.success:
            return None
        status = getattr(outcome, "status_code", None)
        if status is not None:
            return f"{self._url} did not accept the spans (HTTP {status})"
        error = getattr(outcome, "error", None)
        reason = str(error).splitlines()[0][:200] if error is not None else "no answer"
        if "Connection refused" in reason or "NewConnectionError" in reason:
            reason = "connection refused"
        return f"cannot send spans to {self._url} (after retrying): {reason}"

    async def send_encoded(self, encoded: Sequence[Any]) -> None:
        """Send spans made ready by :meth:`encode` from a worker thread.

        Raises:
            TelemetryExportError: The endpoint refused a batch or could not be reached.
        """
        await asyncio.to_thread(self.send_encoded_now, encoded)

    async def send(self, spans: Sequence[SpanData]) -> None:
        """Send ``spans`` from a worker thread (see :meth:`send_now`).

        Raises:
            TelemetryExportError: The endpoint refused a batch or could not be reached.
        """
        await asyncio.to_thread(self.send_now, spans)

    def close(self) -> None:
        """Release the exporter's connections."""
        self._exporter.shutdown()  # type: ignore[no-untyped-call]


__all__ = ["BATCH", "OtlpSender", "traces_url"]
