"""The export format: JSON Lines, one stored event per line, exactly as it was recorded.

Each line holds every stored column of one event: ``session_id``, ``version``, ``event_id``,
``recorded_at`` (the canonical UTC text the hash covers), ``event_type``, ``schema_version``,
``payload`` (the stored JSON text, byte for byte), ``prev_hash``, ``hash`` and, for information,
the ``position`` it had in the ledger it came from. Each session's events are together, in
version order, so every chain can be verified from the file alone.
"""

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO
from uuid import UUID

from pydantic import BaseModel, ConfigDict, ValidationError

from api.cli.common import CliError, UsageError
from ledger.chain import StoredRow
from ledger.codec import decode_payload
from ledger.envelope import RecordedEvent, format_time, parse_time
from ledger.errors import EventDecodingError


class ExportLine(BaseModel):
    """One line of an export, as read back: every field required, nothing unknown."""

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


def to_line(record: RecordedEvent) -> str:
    """Return ``record`` as one line of an export (newline included)."""
    return (
        json.dumps(
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
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        + "\n"
    )


def read_lines(path: Path) -> Iterator[tuple[int, int, ExportLine]]:
    """Yield (line number, bytes read so far, the line's fields) for each non-blank line.

    Raises:
        CliError: A line is not JSON, lacks a field or has an unknown one (naming the line).
        UsageError: The file cannot be opened.
    """
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    offset = 0
    with handle:
        for number, raw in enumerate(handle, start=1):
            offset += len(raw)
            if not raw.strip():
                continue
            try:
                line = ExportLine.model_validate_json(raw)
            except ValidationError as exc:
                raise CliError(
                    f"{path}:{number}: not a thoughtledger export line ({_problem(exc)})"
                ) from None
            yield number, offset, line


def decoded(path: Path, number: int, line: ExportLine) -> RecordedEvent:
    """The event of a line, or a one-line error naming the line.

    Raises:
        CliError: The id, time or payload of the line is malformed.
    """
    try:
        return line.record()
    except (ValueError, EventDecodingError) as exc:
        raise CliError(f"{path}:{number}: {exc}") from None


@contextlib.contextmanager
def atomic_file(target: Path) -> Iterator[TextIO]:
    """Write ``target`` all at once: into a temporary file beside it, renamed over it at the end.

    On any failure the temporary file is removed and ``target`` is left as it was. The file is
    created readable by its owner only: exports hold everything the agents thought.

    Raises:
        CliError: The file cannot be created or written.
    """
    try:
        fd, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
    except OSError as exc:
        raise CliError(f"cannot write {target}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise CliError(f"cannot write {target}: {exc.strerror or exc}") from exc
        raise


def _problem(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


__all__ = ["ExportLine", "atomic_file", "decoded", "read_lines", "to_line"]
