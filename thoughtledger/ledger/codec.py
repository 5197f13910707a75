"""Encoding events to stored JSON and decoding them back, including schema upcasts.

A thought event is written in payload schema 2's redactable layout (its text under a salted
digest, see :mod:`thoughtledger.ledger.content`); every other event as its fields. A schema-1
payload (every event is its fields) decodes as it always did.
"""

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from thoughtledger.ledger.content import ContentError, model_json, seal_content
from thoughtledger.ledger.errors import EventDecodingError, InvalidInputError
from thoughtledger.ledger.events import (
    ANNOTATION_TYPE,
    EVENT_TYPES,
    PAYLOAD_SCHEMA_VERSION,
    REDACTABLE_FROM,
    REDACTABLE_TYPES,
    Event,
    LedgerEvent,
    ThoughtAnnotated,
    ThoughtEvent,
    ThoughtGenerated,
)

_ENVELOPE_FIELDS = {"type", "schema_version"}
_COMMITTED_THOUGHT = {"type", "schema_version", "thought", "redacted"}
_COMMITTED_GENERATED = {"type", "schema_version", "thought", "guidance", "redacted"}
_COMMITTED_NOTE = {"type", "schema_version", "note", "redacted"}


def encode_payload(event: Event) -> str:
    """Return the stored JSON payload of ``event``: its fields but ``type`` and ``schema_version``.

    A thought event's text (and guidance) goes into its content member under a fresh salt and
    the digest that commits to it (:func:`thoughtledger.ledger.content.seal_content`).

    Args:
        event: The event to encode.

    Returns:
        Compact JSON text. Unset optional fields are omitted; decoding restores them as ``None``.

    Raises:
        InvalidInputError: ``event`` is not one of the ledger's event models, or holds text that
            is not valid Unicode.
    """
    if type(event) not in _KNOWN_MODELS:
        raise InvalidInputError(f"not a ledger event: {type(event).__name__}")
    try:
        if isinstance(event, ThoughtAnnotated):
            # An annotation's note is redactable as a thought's text is.
            committed = event.model_dump_json(exclude=_COMMITTED_NOTE, exclude_none=True)
            return seal_content(committed, {"note": event.note})
        if not isinstance(event, ThoughtEvent):
            return event.model_dump_json(exclude=_ENVELOPE_FIELDS, exclude_none=True)
        texts = {"thought": event.thought}
        if isinstance(event, ThoughtGenerated):
            texts["guidance"] = event.guidance
            committed = event.model_dump_json(exclude=_COMMITTED_GENERATED, exclude_none=True)
        else:
            committed = event.model_dump_json(exclude=_COMMITTED_THOUGHT, exclude_none=True)
        return seal_content(committed, texts)
    except PydanticSerializationError as exc:
        # The only text pydantic cannot serialise is text that is not valid Unicode.
        raise InvalidInputError(
            f"{type(event).__name__} holds text that is not valid Unicode (a lone surrogate)"
        ) from exc


def event_type_of(event: Event) -> str:
    """Return the stored type string of ``event``.

    Raises:
        InvalidInputError: ``event`` is not one of the ledger's event models.
    """
    try:
        return _KNOWN_MODELS[type(event)]
    except KeyError:
        raise InvalidInputError(f"not a ledger event: {type(event).__name__}") from None


def decode_payload(event_type: str, schema_version: int, payload: str) -> LedgerEvent:
    """Rebuild an event from its stored type, schema version and JSON payload.

    Args:
        event_type: The stored type string, such as ``"thought.recorded"``.
        schema_version: The schema version the payload was written with.
        payload: The stored JSON payload.

    Returns:
        The event, upcast to the current schema version.

    Raises:
        EventDecodingError: The type is unknown, the schema version is newer than this code, or
            the payload does not match the model.
    """
    model = EVENT_TYPES.get(event_type)
    if model is None:
        raise EventDecodingError(f"unknown event type {event_type!r}; upgrade thoughtledger")
    if schema_version > PAYLOAD_SCHEMA_VERSION:
        raise EventDecodingError(
            f"event schema version {schema_version} is newer than this thoughtledger "
            f"understands ({PAYLOAD_SCHEMA_VERSION}); upgrade thoughtledger"
        )
    # Schema 1 differs from 2 only in where a thought's text is: its fields validate as they are.
    try:
        if schema_version >= REDACTABLE_FROM and event_type in REDACTABLE_TYPES:
            payload = model_json(
                payload,
                guidance=event_type == "thought.generated",
                note=event_type == ANNOTATION_TYPE,
            )
        event = model.model_validate_json(payload)
    except (ValidationError, ContentError) as exc:
        raise EventDecodingError(f"stored {event_type} payload is malformed: {exc}") from exc
    return event  # type: ignore[return-value]  # EVENT_TYPES only holds LedgerEvent members


_KNOWN_MODELS: dict[type[Event], str] = {model: name for name, model in EVENT_TYPES.items()}

__all__ = ["decode_payload", "encode_payload", "event_type_of"]
