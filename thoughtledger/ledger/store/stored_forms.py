"""How the log keeps hashes and event ids (binary since schema step 18), and reading them back.

A hash is 64 hex digits wherever it is shown, hashed or exported; an event id is canonical UUID
text. Kept as text they cost twice their size in the log's rows and again in the event-id index,
so from step 18 the SQL backends keep a hash as its 32 bytes and an event id as its 16 (SQLite:
``BLOB`` values in the same columns; PostgreSQL: ``bytea`` and ``uuid`` columns). Reads turn them
back into exactly the text they were made from, so nothing shown, hashed or exported changes.

On SQLite a value the step could not write back as the same text keeps its text (a column holds
either), and so does a row written outside the ledger: readers accept both forms. Every row is
decoded in :mod:`thoughtledger.ledger.store.rows`, which calls these.
"""

from uuid import UUID, SafeUUID

HASH_BYTES = 32
"""Bytes of a SHA-256 hash."""

BINARY_COLUMNS_POSTGRES = """
DO $$
BEGIN
    IF (SELECT data_type FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'tl_events'
          AND column_name = 'hash') <> 'bytea' THEN
        ALTER TABLE tl_events
            ALTER COLUMN event_id TYPE uuid USING event_id::uuid,
            ALTER COLUMN prev_hash TYPE bytea USING decode(prev_hash, 'hex'),
            ALTER COLUMN hash TYPE bytea USING decode(hash, 'hex');
    END IF;
END
$$"""
"""Step 18 on PostgreSQL: the log's hashes as ``bytea`` and its event ids as ``uuid``, unless a
ledger created at this step has them so already."""

BINARY_FILL_SQLITE = (
    "UPDATE tl_events SET event_id = tl_id_bytes(event_id), "
    "prev_hash = tl_hash_bytes(prev_hash), hash = tl_hash_bytes(hash) "
    "WHERE position > :low AND position <= :high"
)
"""Step 18's batch on SQLite: ``tl_id_bytes`` and ``tl_hash_bytes`` are
:func:`~thoughtledger.ledger.store.stored_forms.id_bytes` and ``hash_bytes``, given to the
connection for the upgrade (SQLite before 3.41 has no ``unhex``)."""


def hash_bytes(text: str) -> bytes | str:
    """The stored form of a hash: its bytes, or the text itself when it is not lowercase hex.

    Only lowercase hex of a SHA-256 is written as bytes: the bytes' hex is then the same text.
    """
    if len(text) == 2 * HASH_BYTES and text == text.lower():
        try:
            return bytes.fromhex(text)
        except ValueError:
            return text
    return text


def hash_text(value: bytes | str) -> str:
    """A stored hash as the 64 hex digits it was made from (text stays as it is)."""
    return value.hex() if isinstance(value, bytes) else value


def id_bytes(text: str) -> bytes | str:
    """The stored form of an event id: its 16 bytes when ``text`` is canonical UUID text.

    Any other text is kept as it is, so that reading it back gives the same text.
    """
    try:
        value = UUID(text)
    except ValueError:
        return text
    return value.bytes if str(value) == text else text


def id_text(value: bytes | str | UUID) -> str:
    """A stored event id as canonical UUID text (text stays as it is)."""
    if isinstance(value, str):
        return value
    return str(id_uuid(value) if isinstance(value, bytes) else value)


def id_uuid(value: bytes | str | UUID) -> UUID:
    """A stored event id as a UUID (ids the ledger wrote: no validation beyond the form's)."""
    if isinstance(value, UUID):
        return value
    # UUID(text) validates and normalises at ~4 us a call; stored ids are canonical text
    # written by this code, so building the object from its integer is enough (4x cheaper).
    number = int.from_bytes(value) if isinstance(value, bytes) else int(value.replace("-", ""), 16)
    made = object.__new__(UUID)
    object.__setattr__(made, "int", number)
    object.__setattr__(made, "is_safe", SafeUUID.unknown)
    return made


__all__ = [
    "BINARY_COLUMNS_POSTGRES",
    "BINARY_FILL_SQLITE",
    "HASH_BYTES",
    "hash_bytes",
    "hash_text",
    "id_bytes",
    "id_text",
    "id_uuid",
]
