"""A stored event's fields as its model has them, read from its payload without building it.

An export reads tens of thousands of events a second; validating each into its pydantic model
costs more than everything else its spans need. The ledger validated each payload when it was
written (and the hash chain keeps it as written), so a payload of a known type and schema is
simply parsed (a redactable thought's text and its redaction mark read as its model has them,
:func:`thoughtledger.ledger.content.model_json`), unless it holds a count past 64 bits, which the
parser would read as a float. Anything else goes through
:func:`thoughtledger.ledger.codec.decode_payload`, which refuses what this code cannot read with the
same error a decoding read raises.
"""

from typing import Any

import orjson

from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.content import ContentError, model_json
from thoughtledger.ledger.envelope import EventRow, LogRow
from thoughtledger.ledger.events import (
    ANNOTATION_TYPE,
    EVENT_TYPES,
    PAYLOAD_SCHEMA_VERSION,
    REDACTABLE_FROM,
    REDACTABLE_TYPES,
)

Fields = dict[str, Any]

_ENVELOPE = {"type", "schema_version"}
"""What a model holds but its stored payload does not."""

_FLOATS = ("temperature", "cost", "confidence")
"""A generation's float fields: its model reads a JSON ``1`` as ``1.0``, and so must a span."""


def event_fields(row: LogRow | EventRow) -> Fields:
    """Return the fields of the event ``row`` holds, as its model has them.

    An optional field left out of the payload (the ledger stores ``None`` so) is left out here
    too; a nested generation is a dict.

    Raises:
        EventDecodingError: The type is unknown, the schema is newer than this code, or the
            payload does not parse.
    """
    if 0 < row.schema_version <= PAYLOAD_SCHEMA_VERSION and row.event_type in EVENT_TYPES:
        payload = row.payload
        try:
            if row.schema_version >= REDACTABLE_FROM and row.event_type in REDACTABLE_TYPES:
                payload = model_json(
                    payload,
                    guidance=row.event_type == "thought.generated",
                    note=row.event_type == ANNOTATION_TYPE,
                )
            fields = orjson.loads(payload)
        except (orjson.JSONDecodeError, ContentError):
            fields = None
        # A float where the event has none: a count past 64 bits, which orjson reads as one.
        if type(fields) is dict and float not in map(type, fields.values()):
            generation = fields.get("generation")
            if type(generation) is not dict:
                return fields
            for name, value in generation.items():
                if type(value) is float and name not in _FLOATS:
                    break
            else:
                for name in _FLOATS:
                    if type(generation.get(name)) is int:
                        generation[name] = float(generation[name])
                return fields
    return decoded_fields(row)


def decoded_fields(row: LogRow | EventRow) -> Fields:
    """Return the fields of ``row``'s event through its model (the slow, checked way).

    Raises:
        EventDecodingError: The stored event cannot be decoded.
    """
    event = decode_payload(row.event_type, row.schema_version, row.payload)
    fields = event.model_dump(exclude=_ENVELOPE, exclude_none=True)
    if getattr(event, "redacted", False):
        fields["redacted"] = True  # a mark the model keeps but never dumps
    return fields


__all__ = ["Fields", "decoded_fields", "event_fields"]
