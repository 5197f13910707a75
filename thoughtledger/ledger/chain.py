"""The hash chain: sealing new events onto a session and verifying stored ones.

Each event's hash is SHA-256 over a canonical JSON header (previous hash, session, version, event
id, time, type, schema version), a newline, and the UTF-8 of the payload's **committed form**.
Because every hash covers the previous one, editing, deleting or reordering any stored event
breaks the chain from that event on, and the session head (last version and hash, kept beside
the log) exposes a truncated tail.

The committed form of a payload is the payload itself, except for a thought event of payload
schema 2 or later (:data:`~thoughtledger.ledger.events.REDACTABLE_FROM`), laid out as::

    {"content_sha256":"<64 hex>",<committed fields>,"content":{"salt":"<32 hex>",<content fields>}}

Its committed form is ``payload[:k] + "}"`` with ``k = payload.rfind(',"content":{"salt":"')``:
everything but the content member, whose text the hash covers only through ``content_sha256`` =
SHA-256(``bytes.fromhex(salt)`` + UTF-8 of ``{<content fields>}``), the content object as stored
without its ``salt`` member (see :mod:`thoughtledger.ledger.content`). Verifying such an event
checks the content against that digest, then hashes the committed form. Removing the content member
(a redaction) leaves the committed form, so every hash, the Merkle tree over them and every proof
still verify; a payload without its content must be named by a ``thought.redacted`` event of its
session (checked when the session's walk ends), else verification fails.
"""

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from json.encoder import encode_basestring_ascii as _quote
from uuid import UUID

from thoughtledger.ledger.codec import encode_payload, event_type_of
from thoughtledger.ledger.content import CONTENT_MARK, ContentError, committed_bytes
from thoughtledger.ledger.envelope import EventRow, RecordedEvent, format_time
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import (
    PAYLOAD_SCHEMA_VERSION,
    REDACTABLE_FROM,
    REDACTABLE_TYPES,
    LedgerEvent,
)

GENESIS_HASH = "0" * 64
"""The ``prev_hash`` of every session's first event."""


def compute_hash(
    *,
    prev_hash: str,
    session_id: str,
    version: int,
    event_id: str,
    recorded_at: str,
    event_type: str,
    schema_version: int,
    payload: str,
) -> str:
    """Return the hex SHA-256 that seals one event onto its predecessor.

    The header is the compact ASCII JSON array ``json.dumps([prev_hash, session_id, version,
    event_id, recorded_at, event_type, schema_version], ensure_ascii=True, separators=(",", ":"))``
    would write, spelled out with the encoder's own string quoting because it is hashed for every
    event written and read back (four times faster; a property test holds the two equal).
    """
    digest = _header_digest(
        prev_hash, session_id, version, event_id, recorded_at, event_type, schema_version
    )
    digest.update(payload.encode("utf-8"))
    return digest.hexdigest()


def _header_digest(
    prev_hash: str,
    session_id: str,
    version: int,
    event_id: str,
    recorded_at: str,
    event_type: str,
    schema_version: int,
) -> "hashlib._Hash":
    """A SHA-256 fed with an event's header and the newline (see :func:`compute_hash`)."""
    header = (
        f"[{_quote(prev_hash)},{_quote(session_id)},{int(version)},{_quote(event_id)},"
        f"{_quote(recorded_at)},{_quote(event_type)},{int(schema_version)}]"
    )
    digest = hashlib.sha256(header.encode("ascii"))
    digest.update(b"\n")
    return digest


@dataclass(slots=True)
class SealedEvent:
    """An event ready to store: everything of a :class:`RecordedEvent` except its position.

    Short-lived and private to a store's write path, so not frozen: a frozen dataclass pays for
    each field it sets, and one of these is built for every event written.
    """

    session_id: str
    version: int
    event_id: UUID
    event_id_text: str
    recorded_at: datetime
    recorded_at_text: str
    schema_version: int
    event_type: str
    payload: str
    prev_hash: str
    hash: str
    event: LedgerEvent

    def at(self, position: int) -> RecordedEvent:
        """Return the recorded form of this event at global ``position``."""
        # Positional, in RecordedEvent's field order: one is built for every event written.
        return RecordedEvent(
            position,
            self.session_id,
            self.version,
            self.event_id,
            self.recorded_at,
            self.schema_version,
            self.event_type,
            self.payload,
            self.prev_hash,
            self.hash,
            self.event,
        )


@dataclass(slots=True)
class PreparedEvent:
    """An event encoded for storage, before it is chained onto a session (private).

    Not frozen, like :class:`SealedEvent`: one is built for every event written.
    """

    event: LedgerEvent
    event_type: str
    payload: str
    committed: str
    """What the hash covers: the payload's committed form (see the module docstring)."""


def prepare(events: Sequence[LedgerEvent], *, max_event_bytes: int) -> list[PreparedEvent]:
    """Encode ``events`` for storage, checking each payload's size.

    Raises:
        InvalidInputError: An event is not a ledger event, or its payload is over
            ``max_event_bytes`` bytes.
    """
    prepared: list[PreparedEvent] = []
    for event in events:
        event_type = event_type_of(event)
        payload = encode_payload(event)
        # len() counts characters; only a long payload can be over the byte limit, so encode then.
        if len(payload) * 4 > max_event_bytes and len(payload.encode("utf-8")) > max_event_bytes:
            raise InvalidInputError(
                f"{event_type} event is {len(payload.encode('utf-8'))} bytes encoded, over the "
                f"limit of {max_event_bytes} bytes"
            )
        committed = payload
        if event_type in REDACTABLE_TYPES:
            committed = payload[: payload.rfind(CONTENT_MARK)] + "}"
        prepared.append(PreparedEvent(event, event_type, payload, committed))
    return prepared


def seal(
    session_id: str,
    prepared: Sequence[PreparedEvent],
    *,
    version: int,
    head_hash: str,
    event_ids: Sequence[UUID],
    recorded_at: datetime,
    recorded_at_text: str | None = None,
) -> list[SealedEvent]:
    """Chain ``prepared`` events onto a session whose head is (``version``, ``head_hash``).

    ``recorded_at_text`` may pass ``format_time(recorded_at)`` when the caller has it already.
    """
    moment = recorded_at_text if recorded_at_text is not None else format_time(recorded_at)
    sealed: list[SealedEvent] = []
    prev = head_hash
    for offset, (item, event_id) in enumerate(zip(prepared, event_ids, strict=True), start=1):
        event_id_text = str(event_id)
        digest = compute_hash(
            prev_hash=prev,
            session_id=session_id,
            version=version + offset,
            event_id=event_id_text,
            recorded_at=moment,
            event_type=item.event_type,
            schema_version=PAYLOAD_SCHEMA_VERSION,
            payload=item.committed,
        )
        sealed.append(
            SealedEvent(  # positional, in field order (see SealedEvent.at)
                session_id,
                version + offset,
                event_id,
                event_id_text,
                recorded_at,
                moment,
                PAYLOAD_SCHEMA_VERSION,
                item.event_type,
                item.payload,
                prev,
                digest,
                item.event,
            )
        )
        prev = digest
    return sealed


class StoredRow(EventRow):
    """The stored columns of one event, as read back without decoding (what verification trusts).

    An :class:`~thoughtledger.ledger.envelope.EventRow` (built the same way,
    ``StoredRow.of(record)`` too) that knows the hash its columns should carry.
    """

    __slots__ = ()

    @property
    def redactable(self) -> bool:
        """Whether this is a thought event in the redactable layout (payload schema 2 on)."""
        return self.schema_version >= REDACTABLE_FROM and self.event_type in REDACTABLE_TYPES

    def digest(self) -> str:
        """Return the hash these columns should carry (over the payload's committed form).

        Raises:
            UnicodeEncodeError: The payload is not valid Unicode.
            ContentError: A redactable payload is malformed, or its content does not match its
                digest.
        """
        return self.checked()[0]

    def checked(self) -> tuple[str, bool]:
        """Return the hash these columns should carry, and whether the payload was stripped.

        Raises:
            UnicodeEncodeError: The payload is not valid Unicode.
            ContentError: A redactable payload is malformed, or its content does not match its
                digest.
        """
        digest = _header_digest(
            self.prev_hash,
            self.session_id,
            self.version,
            self.event_id,
            self.recorded_at,
            self.event_type,
            self.schema_version,
        )
        if not self.redactable:
            digest.update(self.payload.encode("utf-8"))
            return digest.hexdigest(), False
        committed, stripped = committed_bytes(self.payload)
        digest.update(committed)
        digest.update(b"}")
        return digest.hexdigest(), stripped


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of walking one session's chain.

    Attributes:
        session_id: The session walked.
        ok: True when every event verified and the head matches the last event.
        checked: How many events were checked.
        first_bad_version: The version of the first event that failed, if any.
        first_bad_event_id: Its event id, when the event exists.
        first_bad_position: Its global position, when the event exists.
        reason: What failed, in words.
    """

    session_id: str
    ok: bool
    checked: int
    first_bad_version: int | None = None
    first_bad_event_id: str | None = None
    first_bad_position: int | None = None
    reason: str | None = None


class ChainWalk:
    """One session's chain checked a row at a time, so a whole ledger is walked in one pass.

    Rows of many sessions read in log order can be fed to one walk each: a session's rows come
    in version order in the log as in the session. :func:`verify_rows` is one walk over one
    session's rows.

    Args:
        session_id: The session walked.
    """

    __slots__ = ("_expected_prev", "_failed", "_named", "_stripped", "checked", "session_id")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.checked = 0
        self._expected_prev = GENESIS_HASH
        self._stripped: list[StoredRow] = []
        self._named: set[tuple[int, str]] = set()
        self._failed: VerifyReport | None = None

    @property
    def failed(self) -> bool:
        """Whether a row fed so far broke the chain (the walk is over)."""
        return self._failed is not None

    def _bad(self, row: StoredRow, reason: str) -> VerifyReport:
        self._failed = VerifyReport(
            session_id=self.session_id,
            ok=False,
            checked=self.checked,
            first_bad_version=row.version,
            first_bad_event_id=row.event_id,
            first_bad_position=row.position,
            reason=reason,
        )
        return self._failed

    def feed(self, row: StoredRow) -> VerifyReport | None:
        """Check the session's next row: the report of the first bad one, else ``None``.

        Once a row failed, the walk is over: later rows are not looked at.
        """
        if self._failed is not None:
            return self._failed
        expected_version = self.checked + 1
        if row.session_id != self.session_id:
            return self._bad(row, f"event belongs to session {row.session_id!r}")
        if row.version > expected_version:
            self._failed = VerifyReport(
                session_id=self.session_id,
                ok=False,
                checked=self.checked,
                first_bad_version=expected_version,
                reason=f"version {expected_version} is missing (the next stored is {row.version})",
            )
            return self._failed
        if row.version != expected_version:
            return self._bad(row, f"expected version {expected_version}, found {row.version}")
        if row.prev_hash != self._expected_prev:
            return self._bad(row, "prev_hash does not match the previous event's hash")
        try:
            actual, removed = row.checked()
        except UnicodeEncodeError:
            return self._bad(row, "payload is not valid Unicode")
        except ContentError as exc:
            return self._bad(row, str(exc))
        if actual != row.hash:
            return self._bad(row, "hash does not match the event's contents")
        if removed:
            self._stripped.append(row)
        elif row.event_type == "thought.redacted":
            self._named.add(_named(row.payload))
        self._expected_prev = row.hash
        self.checked += 1
        return None

    def end(self, head: tuple[int, str] | None) -> VerifyReport:
        """The walk's report, once every row was fed.

        Args:
            head: The recorded (version, hash) of the session's last event, or ``None`` when
                the store keeps no head for it.
        """
        if self._failed is not None:
            return self._failed
        checked = self.checked
        for row in self._stripped:
            if (row.version, row.event_id) not in self._named:
                return VerifyReport(
                    session_id=self.session_id,
                    ok=False,
                    checked=checked,
                    first_bad_version=row.version,
                    first_bad_event_id=row.event_id,
                    first_bad_position=row.position,
                    reason="text is missing and no thought.redacted event explains it",
                )
        if head is not None:
            head_version, head_hash = head
            if head_version != checked or (checked and head_hash != self._expected_prev):
                missing = checked + 1
                return VerifyReport(
                    session_id=self.session_id,
                    ok=False,
                    checked=checked,
                    first_bad_version=missing if head_version > checked else head_version,
                    reason=(
                        f"session head records version {head_version} but the log ends at "
                        f"version {checked}"
                        if head_version != checked
                        else "session head hash does not match the last event"
                    ),
                )
        return VerifyReport(session_id=self.session_id, ok=True, checked=checked)


def verify_rows(
    session_id: str, rows: Iterable[StoredRow], head: tuple[int, str] | None
) -> VerifyReport:
    """Walk ``rows`` (one session, in version order) and check every link and hash.

    Args:
        session_id: The session the rows belong to.
        rows: The stored rows, ordered by version.
        head: The recorded (version, hash) of the session's last event, or ``None`` when the
            store keeps no head for it.

    Returns:
        A report naming the first bad event, or ``ok=True``.
    """
    walk = ChainWalk(session_id)
    for row in rows:
        if walk.feed(row) is not None:
            break
    return walk.end(head)


def _named(payload: str) -> tuple[int, str]:
    """The (version, event id) a ``thought.redacted`` payload names (rare: parsed in full)."""
    try:
        fields = json.loads(payload)
        return int(fields["version"]), str(fields["event_id"])
    except (ValueError, KeyError, TypeError):
        return 0, ""


__all__ = [
    "GENESIS_HASH",
    "ChainWalk",
    "PreparedEvent",
    "SealedEvent",
    "StoredRow",
    "VerifyReport",
    "compute_hash",
    "prepare",
    "seal",
    "verify_rows",
]
