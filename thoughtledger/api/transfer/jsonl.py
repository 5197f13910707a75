"""The export format: JSON Lines, one stored event per line as it was recorded, then a manifest.

Each event line holds every stored column of one event: ``session_id``, ``version``,
``event_id``, ``recorded_at`` (the canonical UTC text the hash covers), ``event_type``,
``schema_version``, ``payload`` (the stored JSON text, byte for byte), ``prev_hash``, ``hash``
and, for information, the ``position`` it had in the ledger it came from. Each session's events
are together, in version order, so every chain can be verified from the file alone.

The last line is the manifest, written once every event is::

    {"manifest": {"format": 1, "sessions": [
        {"session_id": "...", "version": 12, "hash": "...", "events": 12}, ...]}}

(on one line): each session's last version, the hash of its last event, and how many of its
events the file holds. A file without it was cut short, or written before exports had one; a
session whose events stop before the version the manifest names lost its tail. The manifest has
none of an event line's fields, so a reader that knows only event lines refuses the file instead
of taking the manifest for an event.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from thoughtledger.api.errors import ImportRefusedError
from thoughtledger.ledger.chain import StoredRow
from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.envelope import RecordedEvent, format_time, parse_time
from thoughtledger.ledger.errors import EventDecodingError, InvalidInputError
from thoughtledger.ledger.store.base import DEFAULT_MAX_EVENT_BYTES

FORMAT = 1
"""The manifest's ``format``: what this code writes, and the newest it reads."""

MAX_LINE_BYTES = 2 * DEFAULT_MAX_EVENT_BYTES + 64 * 1024
"""The longest event line an export can hold. A payload is JSON text whose control characters are
already escaped, so writing it as a JSON string at most doubles it (each ``"`` and ``\\``); the
other fields take well under 64 KiB. A longer line is refused before it is read whole."""

MANIFEST_ENTRY_BYTES = 512
"""Room for one session in the manifest (a session id is at most 128 characters, a hash 64)."""

_Count = Annotated[int, Field(ge=1)]


class ExportLine(BaseModel):
    """One event line of an export, as read back: every field required, nothing unknown."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    session_id: str
    version: int
    event_id: str
    recorded_at: str
    event_type: str
    schema_version: int
    payload: str
    prev_hash: str
    hash: str
    position: int | None = None

    def stored_row(self, line: int) -> StoredRow:
        """The columns as the hash chain covers them; ``position`` carries the line number."""
        return StoredRow(
            position=line,
            session_id=self.session_id,
            version=self.version,
            event_id=self.event_id,
            recorded_at=self.recorded_at,
            schema_version=self.schema_version,
            event_type=self.event_type,
            payload=self.payload,
            prev_hash=self.prev_hash,
            hash=self.hash,
        )

    def record(self) -> RecordedEvent:
        """The event this line holds, decoded.

        Raises:
            ValueError: A malformed event id or time, or a time without a zone.
            EventDecodingError: The payload does not decode.
        """
        moment = parse_time(self.recorded_at)
        if moment.tzinfo is None:
            raise ValueError(f"recorded_at {self.recorded_at!r} has no time zone")
        return RecordedEvent(
            position=self.position or 0,
            session_id=self.session_id,
            version=self.version,
            event_id=UUID(self.event_id),
            recorded_at=moment,
            schema_version=self.schema_version,
            event_type=self.event_type,
            payload=self.payload,
            prev_hash=self.prev_hash,
            hash=self.hash,
            event=decode_payload(self.event_type, self.schema_version, self.payload),
        )


class ManifestSession(BaseModel):
    """What the manifest says of one session: where its events end, and how many there are."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    session_id: str
    version: _Count
    hash: str
    events: _Count


class Manifest(BaseModel):
    """The manifest: every session of the file, in the order their events appear."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    format: int
    sessions: list[ManifestSession]


class _ManifestLine(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    manifest: Manifest


@dataclass(frozen=True, slots=True)
class Line:
    """One non-blank line of an export, read back.

    Attributes:
        number: Its line number, from 1.
        offset: The bytes read up to its end.
        event: The event line, or ``None`` for the manifest.
        manifest: The manifest, or ``None`` for an event line.
    """

    number: int
    offset: int
    event: ExportLine | None = None
    manifest: Manifest | None = None


def to_line(record: RecordedEvent) -> str:
    """Return ``record`` as one line of an export (newline included)."""
    return _dumps(
        {
            "session_id": record.session_id,
            "version": record.version,
            "event_id": str(record.event_id),
            "recorded_at": format_time(record.recorded_at),
            "event_type": record.event_type,
            "schema_version": record.schema_version,
            "payload": record.payload,
            "prev_hash": record.prev_hash,
            "hash": record.hash,
            "position": record.position,
        }
    )


def manifest_line(sessions: list[ManifestSession]) -> str:
    """Return the manifest that ends an export of ``sessions`` (newline included)."""
    return _dumps({"manifest": Manifest(format=FORMAT, sessions=sessions).model_dump()})


def read_lines(path: Path) -> Iterator[Line]:
    """Yield each non-blank line of an export, parsed; the manifest is the last one.

    No line is read whole beyond :data:`MAX_LINE_BYTES` (or, for the manifest, the room its
    sessions can need), so a file that is not an export cannot exhaust memory.

    Raises:
        ImportRefusedError: A line is too long, not JSON, lacks a field or has an unknown one,
            follows the manifest, or the file ends in the middle of a line (naming the line).
        InvalidInputError: The file cannot be opened.
    """
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    offset = number = sessions = 0
    last_session: str | None = None
    manifest_at: int | None = None
    with handle:
        while True:
            limit = max(MAX_LINE_BYTES, (sessions + 1) * MANIFEST_ENTRY_BYTES)
            raw = handle.readline(limit + 1)
            if not raw:
                return
            number += 1
            offset += len(raw)
            if len(raw) > limit:
                raise ImportRefusedError(
                    f"{path}:{number}: line is over {limit} bytes, longer than any export line "
                    "holds; nothing was imported"
                )
            if not raw.strip():
                continue
            if manifest_at is not None:
                raise ImportRefusedError(
                    f"{path}:{number}: a line follows the manifest on line {manifest_at}, which "
                    "ends an export; nothing was imported"
                )
            parsed = _parse(path, number, raw, unterminated=not raw.endswith(b"\n"))
            if isinstance(parsed, Manifest):
                manifest_at = number
                yield Line(number, offset, manifest=parsed)
                continue
            if parsed.session_id != last_session:
                last_session = parsed.session_id
                sessions += 1
            yield Line(number, offset, event=parsed)


def decoded(path: Path, number: int, line: ExportLine) -> RecordedEvent:
    """The event of a line, or a one-line error naming the line.

    Raises:
        ImportRefusedError: The id, time or payload of the line is malformed.
    """
    try:
        return line.record()
    except (ValueError, EventDecodingError) as exc:
        raise ImportRefusedError(f"{path}:{number}: {exc}") from None


def _parse(path: Path, number: int, raw: bytes, *, unterminated: bool) -> ExportLine | Manifest:
    head = raw.lstrip()
    is_manifest = head.startswith(b"{") and head[1:].lstrip().startswith(b'"manifest"')
    try:
        if not is_manifest:
            return ExportLine.model_validate_json(raw)
        manifest = _ManifestLine.model_validate_json(raw).manifest
    except ValidationError as exc:
        if unterminated:  # the last line, without its newline: the file was cut inside it
            raise ImportRefusedError(
                f"{path}:{number}: the file ends in the middle of a line: the export was cut "
                "short; nothing was imported"
            ) from None
        what = "manifest" if is_manifest else "thoughtledger export line"
        raise ImportRefusedError(f"{path}:{number}: not a {what} ({_problem(exc)})") from None
    if manifest.format > FORMAT:
        raise ImportRefusedError(
            f"{path}:{number}: the manifest is of format {manifest.format}, newer than this "
            f"thoughtledger reads ({FORMAT}); upgrade thoughtledger"
        )
    return manifest


def _dumps(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def _problem(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


__all__ = [
    "FORMAT",
    "MAX_LINE_BYTES",
    "ExportLine",
    "Line",
    "Manifest",
    "ManifestSession",
    "decoded",
    "manifest_line",
    "read_lines",
    "to_line",
]
