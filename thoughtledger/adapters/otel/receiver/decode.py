"""OTLP/HTTP request bodies to messages: media types, gzip within a bound, OTLP/JSON's hex ids.

Decoding is the maintained ``opentelemetry-proto`` messages' (imported when a body arrives, so
a ledger without the ``otel`` extra starts as before). Two things the protobuf library does not
do for OTLP are done here: an inflated body is bounded (a small gzip body can inflate to
gigabytes), and OTLP/JSON writes trace and span ids as hex where protobuf's JSON mapping
expects base64 (``json_format.Parse`` would read the hex as base64 and make 24-byte ids).
"""

import base64
import json
import zlib
from dataclasses import dataclass
from typing import Any, Literal

from thoughtledger.adapters.otel.receiver.errors import ReceiverError

MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest request body accepted as sent (compressed or not)."""
MAX_INFLATED_BYTES = 64 * 1024 * 1024
"""The largest body accepted once inflated."""

Signal = Literal["traces", "logs"]
Encoding = Literal["protobuf", "json"]

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"})


@dataclass(frozen=True, slots=True)
class Body:
    """A request's body, understood: its signal's request message and how it came encoded."""

    message: Any
    """``ExportTraceServiceRequest`` or ``ExportLogsServiceRequest``."""
    encoding: Encoding


def media_type(content_type: str | None) -> Encoding:
    """Which OTLP encoding a ``Content-Type`` names.

    Raises:
        ReceiverError: 415 for any other type.
    """
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    if kind == "application/x-protobuf":
        return "protobuf"
    if kind == "application/json":
        return "json"
    raise ReceiverError(
        415, f"unsupported content type {kind[:60]!r}: send application/x-protobuf or JSON"
    )


def inflate(body: bytes, content_encoding: str | None) -> bytes:
    """``body`` as sent, gzip inflated, never beyond :data:`MAX_INFLATED_BYTES`.

    Raises:
        ReceiverError: 415 for an encoding other than gzip; 400 for a body that is not gzip;
            413 for one that inflates past the bound.
    """
    coding = (content_encoding or "identity").strip().lower()
    if coding == "identity":
        return body
    if coding != "gzip":
        raise ReceiverError(415, f"unsupported content encoding {coding[:40]!r}: send gzip")
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, MAX_INFLATED_BYTES)
        if inflater.unconsumed_tail:
            raise ReceiverError(413, f"the body inflates past {MAX_INFLATED_BYTES} bytes")
        out += inflater.flush()
    except zlib.error as exc:
        raise ReceiverError(400, f"the body is not valid gzip: {exc}") from None
    if len(out) > MAX_INFLATED_BYTES:
        raise ReceiverError(413, f"the body inflates past {MAX_INFLATED_BYTES} bytes")
    if not inflater.eof:
        raise ReceiverError(400, "the gzip body is cut short")
    return out


def _hex_ids_to_base64(node: Any) -> None:
    # OTLP/JSON ids are hex; protobuf's JSON mapping of bytes is base64.
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_KEYS and isinstance(value, str):
                try:
                    node[key] = base64.b64encode(bytes.fromhex(value)).decode()
                except ValueError:
                    raise ReceiverError(400, f"{key} {value[:40]!r} is not hex") from None
            else:
                _hex_ids_to_base64(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids_to_base64(item)


def _request_type(signal: Signal) -> Any:
    if signal == "traces":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        return ExportTraceServiceRequest
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    return ExportLogsServiceRequest


def decode(signal: Signal, raw: bytes, encoding: Encoding) -> Any:
    """The signal's export request in ``raw`` (already inflated).

    Raises:
        ReceiverError: 400 for a body that is not such a request.
    """
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError

    request = _request_type(signal)()
    if encoding == "protobuf":
        try:
            request.ParseFromString(raw)
        except DecodeError as exc:
            raise ReceiverError(400, f"the body is not an OTLP {signal} request: {exc}") from None
        return request
    try:
        tree = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ReceiverError(400, f"the body is not JSON: {str(exc)[:120]}") from None
    if not isinstance(tree, dict):
        raise ReceiverError(400, f"the body is not an OTLP {signal} request (not an object)")
    _hex_ids_to_base64(tree)
    try:
        json_format.ParseDict(tree, request, ignore_unknown_fields=True)
    except (json_format.ParseError, RecursionError) as exc:
        message = str(exc)[:160]
        raise ReceiverError(400, f"the body is not an OTLP {signal} request: {message}") from None
    return request


def read_body(signal: Signal, body: bytes, headers: dict[str, str]) -> Body:
    """Decode a request's body from its headers (lowercased names): type, encoding, message.

    Raises:
        ReceiverError: 413, 415 or 400 as the body's size, type, encoding or content say;
            501 without the ``otel`` extra's messages.
    """
    if len(body) > MAX_BODY_BYTES:
        raise ReceiverError(413, f"the body has more than {MAX_BODY_BYTES} bytes")
    encoding = media_type(headers.get("content-type"))
    raw = inflate(body, headers.get("content-encoding"))
    try:
        return Body(decode(signal, raw, encoding), encoding)
    except ImportError:
        raise ReceiverError(
            501, "this ledger cannot decode OTLP: install thoughtledger[otel]"
        ) from None


def answer(signal: Signal, encoding: Encoding, rejected: int, message: str) -> bytes:
    """The OTLP export response: partial success when parts were refused or spans ignored."""
    from google.protobuf import json_format

    if signal == "traces":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        response: Any = ExportTraceServiceResponse()
        if rejected or message:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = message
    else:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceResponse,
        )

        response = ExportLogsServiceResponse()
        if rejected or message:
            response.partial_success.rejected_log_records = rejected
            response.partial_success.error_message = message
    if encoding == "json":
        return str(json_format.MessageToJson(response, indent=None)).encode()
    return bytes(response.SerializeToString())


def status(encoding: Encoding, code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` body for a refused request, as OTLP/HTTP answers errors.

    Without the ``otel`` extra's messages, the message alone, as text.
    """
    try:
        from google.protobuf import json_format
        from google.rpc.status_pb2 import Status
    except ImportError:
        return message.encode()

    grpc_codes = {400: 3, 401: 16, 403: 7, 404: 5, 413: 8, 415: 3, 501: 12, 503: 14}
    reply = Status(code=grpc_codes.get(code, 2), message=message)
    if encoding == "json":
        return str(json_format.MessageToJson(reply, indent=None)).encode()
    return bytes(reply.SerializeToString())


__all__ = [
    "MAX_BODY_BYTES",
    "MAX_INFLATED_BYTES",
    "Body",
    "Encoding",
    "Signal",
    "answer",
    "decode",
    "inflate",
    "media_type",
    "read_body",
    "status",
]
