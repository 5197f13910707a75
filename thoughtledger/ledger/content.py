"""The redactable layout of a thought's payload (payload schema 2): its text apart, under a digest.

A thought event of schema 2 is stored as one JSON object whose redactable text (the thought and,
for a thought a model wrote, the caller's guidance) sits in a last member, ``content``, with a
fresh random salt, and whose first member commits to that content by its digest::

    {"content_sha256":"<64 hex>",<committed fields>,"content":{"salt":"<32 hex>",<content fields>}}

* ``content_sha256`` = SHA-256(the salt's 16 bytes + the UTF-8 of ``{<content fields>}``), the
  content object as stored without its ``salt`` member. The salt makes a redacted short text
  impossible to confirm by hashing guesses.
* The **committed form** is the payload up to the content member, closed:
  ``payload[:k] + "}"`` where ``k = payload.rfind(',"content":{"salt":"')``. That raw sequence
  cannot occur inside a JSON string (a quote there is always escaped), and no committed field is
  an object with a ``content`` member, so its last occurrence is the member. The event's hash
  covers the committed form, so removing the content (a redaction) changes no hash: a redacted
  (stripped) payload *is* the committed form.

Everything here slices at fixed offsets and searches once from the end: verification and decoding
read millions of payloads and never parse one to find the text.
"""

import binascii
import hashlib
import os

from pydantic_core import to_json

DIGEST_PREFIX = '{"content_sha256":"'
"""How a schema-2 thought payload begins."""
CONTENT_MARK = ',"content":{"salt":"'
"""The raw text that opens the content member (found by ``rfind``)."""
REDACTED = "[redacted]"
"""What a redacted thought (and guidance) reads as."""
SALT_BYTES = 16
"""Random bytes of each event's salt."""

_DIGEST_END = len(DIGEST_PREFIX) + 64
"""Offset of the quote closing the digest."""
_COMMITTED_AT = _DIGEST_END + 2
"""Offset of the first committed field (after the digest's ``",``)."""
_SALT_AT = len(CONTENT_MARK)
"""Offset of the salt from the content mark."""
_FIELDS_AT = _SALT_AT + 2 * SALT_BYTES + 2
"""Offset of the first content field from the content mark (after the salt's ``",``)."""


class ContentError(ValueError):
    """A payload does not have the redactable layout, or its content does not match its digest."""


def content_digest(salt_hex: str, content_json: str) -> str:
    """Return the hex SHA-256 committing to a content object.

    Args:
        salt_hex: The salt as stored (32 lowercase hex digits).
        content_json: The content object's JSON without its salt: ``{<content fields>}``.

    Raises:
        ValueError: ``salt_hex`` is not hex.
    """
    return hashlib.sha256(bytes.fromhex(salt_hex) + content_json.encode("utf-8")).hexdigest()


def seal_content(committed_json: str, texts: dict[str, str], *, salt: bytes | None = None) -> str:
    """Return a schema-2 thought payload from its committed fields and its redactable texts.

    Args:
        committed_json: The event's other fields as one compact JSON object (never empty).
        texts: The content fields, in order (``thought``, then ``guidance`` when there is one).
        salt: The salt (tests pass one); fresh random bytes when omitted.

    Raises:
        PydanticSerializationError: A text is not valid Unicode (a lone surrogate).
    """
    raw = salt if salt is not None else _random(SALT_BYTES)
    # Every event written passes here: plain concatenation, one encoding, one hash.
    fields = ",".join(['"' + name + '":' + to_json(text).decode() for name, text in texts.items()])
    content = "{" + fields + "}"
    digest = hashlib.sha256(raw + content.encode("utf-8")).hexdigest()
    return (
        DIGEST_PREFIX
        + digest
        + '",'
        + committed_json[1:-1]
        + CONTENT_MARK
        + raw.hex()
        + '",'
        + content[1:]
        + "}"
    )


_random = os.urandom
"""Where salts come from: the operating system's CSPRNG (what ``secrets.token_bytes`` reads)."""


def committed_form(payload: str) -> tuple[str, bool]:
    """Return what the hash of a schema-2 thought payload covers, and whether it was stripped.

    Checks the content against its digest when the content is present.

    Raises:
        ContentError: The payload does not have the redactable layout, or its content does not
            match its digest.
    """
    if not payload.startswith(DIGEST_PREFIX) or payload[_DIGEST_END:_COMMITTED_AT] != '",':
        raise ContentError("payload does not have the layout of a redactable thought")
    mark = payload.rfind(CONTENT_MARK)
    if mark < 0:
        return payload, True
    salt = payload[mark + _SALT_AT : mark + _FIELDS_AT - 2]
    if payload[mark + _FIELDS_AT - 2 : mark + _FIELDS_AT] != '",' or payload[-2:] != "}}":
        raise ContentError("payload does not have the layout of a redactable thought")
    try:
        canonical = bytes.fromhex(salt).hex() == salt and len(salt) == 2 * SALT_BYTES
        actual = content_digest(salt, "{" + payload[mark + _FIELDS_AT : -1])
    except (ValueError, UnicodeEncodeError):
        canonical, actual = False, ""
    if not canonical or actual != payload[len(DIGEST_PREFIX) : _DIGEST_END]:
        raise ContentError("content does not match its digest")
    return payload[:mark] + "}", False


_PREFIX_BYTES = DIGEST_PREFIX.encode("ascii")
_MARK_BYTES = CONTENT_MARK.encode("ascii")


def committed_bytes(payload: str) -> tuple[bytes | memoryview, bool]:
    """Like :func:`committed_form`, but the UTF-8 the hash covers, without its closing brace.

    The verification path: the payload is encoded once and sliced without copies (the caller
    hashes the returned bytes, then ``b"}"``).

    Raises:
        UnicodeEncodeError: The payload is not valid Unicode.
        ContentError: See :func:`committed_form`.
    """
    data = payload.encode("utf-8")
    if not data.startswith(_PREFIX_BYTES) or data[_DIGEST_END:_COMMITTED_AT] != b'",':
        raise ContentError("payload does not have the layout of a redactable thought")
    mark = data.rfind(_MARK_BYTES)
    view = memoryview(data)
    if mark < 0:
        return view[:-1], True
    salt = data[mark + _SALT_AT : mark + _FIELDS_AT - 2]
    if data[mark + _FIELDS_AT - 2 : mark + _FIELDS_AT] != b'",' or data[-2:] != b"}}":
        raise ContentError("payload does not have the layout of a redactable thought")
    try:
        # unhexlify takes only hex digits; lower() rules out the one other spelling of a salt.
        raw = binascii.unhexlify(salt) if salt == salt.lower() else b""
    except (binascii.Error, ValueError):
        raw = b""
    digest = hashlib.sha256(raw)
    digest.update(b"{")
    digest.update(view[mark + _FIELDS_AT : -1])
    if (
        len(raw) != SALT_BYTES
        or digest.hexdigest().encode("ascii") != data[len(DIGEST_PREFIX) : _DIGEST_END]
    ):
        raise ContentError("content does not match its digest")
    return view[:mark], False


def strip(payload: str) -> str:
    """Return a schema-2 thought payload without its content member (its committed form).

    A payload already stripped is returned as it is.
    """
    mark = payload.rfind(CONTENT_MARK)
    return payload if mark < 0 else payload[:mark] + "}"


def model_json(payload: str, *, guidance: bool, note: bool = False) -> str:
    """Return the JSON an event model validates from a schema-2 thought payload (no parse).

    The committed fields and the content fields, without the digest and the salt; a stripped
    payload gets :data:`REDACTED` texts and ``"redacted":true``.

    Args:
        payload: The stored payload.
        guidance: Whether the event has a ``guidance`` text (a thought a model wrote).
        note: Whether the event is an annotation, whose one text is its ``note``.

    Raises:
        ContentError: The payload does not begin as a schema-2 thought payload does.
    """
    if not payload.startswith(DIGEST_PREFIX):
        raise ContentError("payload does not have the layout of a redactable thought")
    mark = payload.rfind(CONTENT_MARK)
    if mark < 0:
        texts = _REDACTED_NOTE if note else _REDACTED_GENERATED if guidance else _REDACTED_THOUGHT
        return "{" + payload[_COMMITTED_AT:-1] + texts
    return "{" + payload[_COMMITTED_AT:mark] + "," + payload[mark + _FIELDS_AT : -2] + "}"


def comparable(payload: str) -> tuple[str, str | None]:
    """Return a schema-2 thought payload's committed fields and content fields, salt-free.

    Two encodings of one event differ only in their salt (and so their digest); this is what
    they share. The content part is ``None`` when the payload is stripped.
    """
    mark = payload.rfind(CONTENT_MARK)
    if mark < 0:
        return payload[_COMMITTED_AT:-1], None
    return payload[_COMMITTED_AT:mark], payload[mark + _FIELDS_AT : -2]


def same_event(stored: str, encoded: str) -> bool:
    """Whether two schema-2 thought payloads are encodings of one event (salts aside).

    A stored payload whose content was removed matches on its committed fields alone.
    """
    if not (stored.startswith(DIGEST_PREFIX) and encoded.startswith(DIGEST_PREFIX)):
        return stored == encoded
    fields, text = comparable(stored)
    new_fields, new_text = comparable(encoded)
    return fields == new_fields and (text is None or text == new_text)


_REDACTED_THOUGHT = f',"thought":"{REDACTED}","redacted":true}}'
_REDACTED_NOTE = f',"note":"{REDACTED}","redacted":true}}'
_REDACTED_GENERATED = f',"thought":"{REDACTED}","guidance":"{REDACTED}","redacted":true}}'

__all__ = [
    "CONTENT_MARK",
    "DIGEST_PREFIX",
    "REDACTED",
    "SALT_BYTES",
    "ContentError",
    "committed_bytes",
    "committed_form",
    "comparable",
    "content_digest",
    "model_json",
    "same_event",
    "seal_content",
    "strip",
]
