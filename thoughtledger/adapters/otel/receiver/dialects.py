"""One mapping, several dialects: an OTLP span's (or log record's) reasoning as captured spans.

Senders write an agent's reasoning each in their own way:

- the GenAI semantic conventions: ``reasoning`` parts in ``gen_ai.output.messages`` (a JSON
  string on the span, or a structured value on the ``gen_ai.client.inference.operation.details``
  event, as a span event or a log record); OpenLLMetry writes these;
- pydantic-ai and Langfuse: ``thinking`` parts in the same messages; Anthropic's
  ``redacted_thinking`` parts are opaque;
- OpenInference: ``llm.output_messages.N.message.contents.M.message_content.type = reasoning``
  with its ``text``, ``signature`` or (redacted) ``data``; tool calls under ``tool_calls``.

Each reasoning part becomes a :class:`~thoughtledger.api.CapturedReasoning`, each tool call a
:class:`~thoughtledger.api.CapturedAction`, in the order sent. The session key is the sender's
``gen_ai.conversation.id`` (OpenInference: ``session.id``), else the trace; the agent is
``gen_ai.agent.name``, the client the resource's ``service.name``.
"""

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from thoughtledger.api import CapturedAction, CapturedReasoning, CapturedSpan

DETAILS_EVENT = "gen_ai.client.inference.operation.details"
"""The semantic conventions' event carrying a call's messages (a span event or a log record)."""

_OUTPUT = "gen_ai.output.messages"
_OI_PREFIX = "llm.output_messages."
_OI_CONTENT = re.compile(
    r"^llm\.output_messages\.(\d+)\.message\.contents\.(\d+)\.message_content\.(\w+)$"
)
_OI_TOOL = re.compile(
    r"^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.([\w.]+)$"
)
_MAX_RAW_RESPONSE = 1 << 20
_LONG_NUMBER = re.compile(r"\d{19}")

Part = CapturedReasoning | CapturedAction


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain Python value (lists and dicts for arrays and kvlists)."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def attributes(pairs: Iterable[Any]) -> dict[str, Any]:
    """``KeyValue`` pairs as a dict."""
    found: dict[str, Any] = {}
    for kv in pairs:
        value = kv.value
        # Nearly every attribute is a string: read it without asking its kind (a value of
        # another kind, or none, reads as "", and so does an empty string, which any_value
        # gives as it is).
        found[kv.key] = value.string_value or any_value(value)
    return found


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _summary(part: Mapping[str, Any]) -> str | None:
    summary = part.get("summary")
    if isinstance(summary, str):
        return summary or None
    if isinstance(summary, list):
        texts = [s.get("text") if isinstance(s, Mapping) else s for s in summary]
        joined = "\n\n".join(t for t in texts if isinstance(t, str) and t)
        return joined or None
    return None


def _loads(text: str) -> Any:
    """``json.loads(text)`` (``None`` for text that is not JSON), four times faster.

    orjson reads what Python's JSON reads, the same, except an integer past 64 bits (a float to
    orjson) and what it refuses (NaN, an escaped lone surrogate): text with 19 digits in a row,
    or refused, is read by Python's JSON.
    """
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(text)
    except ValueError:
        return None


def message_parts(messages: Any) -> list[Part]:
    """The reasoning parts and tool calls of semantic-convention output messages.

    ``messages`` is the attribute's value: a JSON string, or already a list of messages.
    """
    if isinstance(messages, str):
        messages = _loads(messages)
    if not isinstance(messages, list):
        return []
    found: list[Part] = []
    # Messages and parts are dicts whichever way they came (JSON text or an AnyValue's
    # kvlist): ``dict`` is checked, not ``Mapping``, whose check costs several times more.
    for message in messages:
        parts = message.get("parts") if isinstance(message, dict) else None
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, dict) and (item := _message_part(part)) is not None:
                    found.append(item)
    return found


def _message_part(part: Mapping[str, Any]) -> Part | None:
    kind = part.get("type")
    if kind == "reasoning" or kind == "thinking":
        signature = _text(part.get("signature"))
        content = _text(part.get("content")) or _text(part.get("thinking"))
        encrypted = _text(part.get("encrypted_content")) or _text(part.get("data"))
        if content is not None:
            return CapturedReasoning(content, "full", signature, encrypted)
        summary = _summary(part)
        if summary is not None:
            return CapturedReasoning(summary, "summary", signature, encrypted)
        if encrypted is not None:
            return CapturedReasoning("", "opaque", signature, encrypted)
    elif kind == "redacted_thinking":
        data = _text(part.get("data")) or _text(part.get("content"))
        if data is not None:
            return CapturedReasoning("", "opaque", _text(part.get("signature")), data)
    elif kind == "tool_call":
        name = _text(part.get("name"))
        if name is not None:
            return CapturedAction(name, _text(part.get("id")), _arguments(part.get("arguments")))
    return None


def openinference_parts(attrs: Mapping[str, Any]) -> list[Part]:
    """OpenInference's reasoning contents and tool calls, read from its flattened attributes."""
    contents: dict[tuple[int, int], dict[str, Any]] = {}
    tools: dict[tuple[int, int], dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(_OI_PREFIX):
            continue
        if match := _OI_CONTENT.match(key):
            contents.setdefault((int(match[1]), int(match[2])), {})[match[3]] = value
        elif match := _OI_TOOL.match(key):
            tools.setdefault((int(match[1]), int(match[2])), {})[match[3]] = value
    found: list[Part] = []
    for _, content in sorted(contents.items()):
        if content.get("type") != "reasoning":
            continue
        text, data = _text(content.get("text")), _text(content.get("data"))
        signature = _text(content.get("signature"))
        if text is not None:
            found.append(CapturedReasoning(text, "full", signature, data))
        elif data is not None:
            found.append(CapturedReasoning("", "opaque", signature, data))
    for _, call in sorted(tools.items()):
        name = _text(call.get("function.name"))
        if name is not None:
            arguments = _arguments(call.get("function.arguments"))
            found.append(CapturedAction(name, _text(call.get("id")), arguments))
    return found


def _first(attrs: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _response_id(attrs: Mapping[str, Any]) -> str | None:
    found = _first(attrs, "gen_ai.response.id")
    if isinstance(found, str):
        return found
    raw = attrs.get("output.value")  # OpenInference keeps the provider's raw response
    if isinstance(raw, str) and raw.startswith("{") and len(raw) < _MAX_RAW_RESPONSE:
        try:
            answer = json.loads(raw)
        except ValueError:
            return None
        found = answer.get("id") if isinstance(answer, dict) else None
        return found if isinstance(found, str) else None
    return None


def captured(
    trace_id: bytes,
    span_id: bytes,
    started_ns: int,
    attrs: Mapping[str, Any],
    resource: Mapping[str, Any],
    extra_messages: Iterable[Any] = (),
) -> CapturedSpan | None:
    """What one span (or log record) says of reasoning; ``None`` when it says nothing.

    Args:
        trace_id: The trace's 16 bytes.
        span_id: The span's 8 bytes.
        started_ns: When it started (orders spans).
        attrs: Its attributes.
        resource: Its resource's attributes.
        extra_messages: Output messages carried by its details events.
    """
    if len(trace_id) != 16 or len(span_id) != 8:
        return None
    if attrs.get("gen_ai.operation.name") == "invoke_agent":
        return None  # an agent run repeats its calls' messages: the calls' spans carry them
    dialect = "gen_ai"
    parts: list[Part] = []
    for messages in (attrs.get(_OUTPUT), *extra_messages):
        if messages is not None and not parts:
            parts = message_parts(messages)
    if not parts and any(key.startswith(_OI_PREFIX) for key in attrs):
        dialect, parts = "openinference", openinference_parts(attrs)
    if not parts:
        return None
    model = _first(attrs, "gen_ai.response.model", "llm.model_name", "gen_ai.request.model")
    provider = _first(attrs, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
    conversation = _first(attrs, "gen_ai.conversation.id", "session.id")
    tokens = _first(
        attrs,
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.usage.reasoning_tokens",
        "gen_ai.usage.details.reasoning_tokens",
        "gen_ai.usage.output_tokens_details.reasoning_tokens",
        "llm.token_count.completion_details.reasoning",
    )
    return CapturedSpan(
        trace_id=trace_id.hex(),
        span_id=span_id.hex(),
        dialect=dialect,
        parts=tuple(parts),
        conversation=str(conversation) if conversation is not None else None,
        started_ns=started_ns,
        agent=_text(attrs.get("gen_ai.agent.name")),
        client=_text(resource.get("service.name")),
        provider=str(provider) if provider is not None else None,
        model=str(model) if model is not None else None,
        response_id=_response_id(attrs),
        reasoning_tokens=_count(tokens),
    )


def from_traces(request: Any) -> tuple[list[CapturedSpan], int, int]:
    """The captured spans of an ``ExportTraceServiceRequest``, the spans in all, those ignored."""
    spans: list[CapturedSpan] = []
    total = ignored = 0
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                total += 1
                events = span.events
                details = (
                    [
                        attributes(event.attributes).get(_OUTPUT)
                        for event in events
                        if event.name == DETAILS_EVENT
                    ]
                    if events
                    else ()
                )
                found = captured(
                    span.trace_id,
                    span.span_id,
                    span.start_time_unix_nano,
                    attributes(span.attributes),
                    resource,
                    details,
                )
                if found is None:
                    ignored += 1
                else:
                    spans.append(found)
    return spans, total, ignored


def from_logs(request: Any) -> tuple[list[CapturedSpan], int, int]:
    """The captured spans of an ``ExportLogsServiceRequest``'s details events (by their span)."""
    spans: list[CapturedSpan] = []
    total = ignored = 0
    for resource_logs in request.resource_logs:
        resource = attributes(resource_logs.resource.attributes)
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                total += 1
                attrs = attributes(record.attributes)
                if record.event_name not in ("", DETAILS_EVENT) or _OUTPUT not in attrs:
                    ignored += 1
                    continue
                found = captured(
                    record.trace_id,
                    record.span_id,
                    record.time_unix_nano or record.observed_time_unix_nano,
                    attrs,
                    resource,
                )
                if found is None:
                    ignored += 1
                else:
                    spans.append(found)
    return spans, total, ignored


__all__ = [
    "DETAILS_EVENT",
    "any_value",
    "attributes",
    "captured",
    "from_logs",
    "from_traces",
    "message_parts",
    "openinference_parts",
]
