"""Checking an export file on its own, before any ledger is opened, so a bad file changes nothing.

Every line is parsed (:mod:`thoughtledger.api.transfer.jsonl`), and each session's lines
must be
together, form a hash chain that verifies from version 1, keep their times in order (a session's
events never go back in time), and hold nothing the ledger's API would refuse to record: no thought
or guidance over :data:`~thoughtledger.ledger.decide.DEFAULT_MAX_THOUGHT_BYTES`, no branch id over
:data:`~thoughtledger.ledger.decide.MAX_BRANCH_ID_CHARS` characters. Then the manifest must account
for every session and end where the file's events end; a file without one is refused as cut short
unless the caller accepts it unchecked (an export from before manifests existed).
"""

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from uuid import UUID

from thoughtledger.api.errors import ImportRefusedError
from thoughtledger.api.transfer.jsonl import ExportLine, Manifest, decoded, read_lines
from thoughtledger.ledger.chain import StoredRow, verify_rows
from thoughtledger.ledger.decide import DEFAULT_MAX_THOUGHT_BYTES, MAX_BRANCH_ID_CHARS
from thoughtledger.ledger.envelope import RecordedEvent, format_time
from thoughtledger.ledger.events import ThoughtEvent, ThoughtGenerated


class Progress(Protocol):
    """Told how much more work is done: bytes read, events written."""

    def advance(self, amount: float = 1) -> None:
        """Record ``amount`` more units of work done."""


class NoProgress:
    """Progress that goes nowhere, for callers that show none."""

    def advance(self, amount: float = 1) -> None:
        """Do nothing."""


KEEP = 100_000
"""Files of up to this many events are held in memory after checking, not read again."""


@dataclass
class SessionInFile:
    """What the file holds of one session (versions 1, 2, 3... in order).

    Attributes:
        line: The line of its first event.
        hashes: Its events' hashes.
        event_ids: Its events' ids.
    """

    line: int
    hashes: list[str] = field(default_factory=list)
    event_ids: list[UUID] = field(default_factory=list)


@dataclass
class CheckedFile:
    """An export file that passed every check of its own.

    Attributes:
        path: The file.
        sessions: Its sessions, in file order.
        has_manifest: Whether it ends with a manifest (``False`` only when accepted without).
        kept: Its events, when few enough to keep in memory; ``None`` when they are read again.
    """

    path: Path
    sessions: dict[str, SessionInFile] = field(default_factory=dict)
    has_manifest: bool = False
    kept: list[RecordedEvent] | None = field(default_factory=list)

    @property
    def events(self) -> int:
        """How many events the file holds."""
        return sum(len(session.hashes) for session in self.sessions.values())

    def by_session(self) -> Iterator[list[RecordedEvent]]:
        """Each session's events, in file order: those kept, or the file read again.

        A file read again must hold exactly what was checked, session by session, or nothing
        more is imported: a session is never written from a file changed since its check.

        Raises:
            ImportRefusedError: The file changed since it was checked.
        """
        if self.kept is not None:
            yield from (list(g) for _, g in itertools.groupby(self.kept, _session))
            return
        events = (
            (line.number, decoded(self.path, line.number, line.event))
            for line in read_lines(self.path)
            if line.event is not None
        )
        for session_id, group in itertools.groupby(events, lambda item: item[1].session_id):
            numbered = list(group)
            records = [record for _, record in numbered]
            known = self.sessions.get(session_id)
            # Same hashes, and contents that still hash to them: the very events checked.
            if (
                known is None
                or [r.hash for r in records] != known.hashes
                or any(not _hashes_to(r) for r in records)
            ):
                raise ImportRefusedError(
                    f"{self.path}:{numbered[0][0]}: the file changed while it was imported; "
                    "the sessions before this line were imported whole, nothing after it"
                )
            yield records


def _hashes_to(record: RecordedEvent) -> bool:
    try:
        return StoredRow.of(record).digest() == record.hash
    except ValueError:  # not valid Unicode, or a text that does not match its digest
        return False


def _session(record: RecordedEvent) -> str:
    return record.session_id


def check_file(path: Path, step: Progress, *, without_manifest: bool = False) -> CheckedFile:
    """Check everything an export file says of itself; return what the import needs of it.

    Args:
        path: The file.
        step: Advanced by the bytes read.
        without_manifest: Accept a file that has no manifest (it cannot be checked for a cut).

    Returns:
        The checked file.

    Raises:
        ImportRefusedError: A malformed, tampered, reordered, oversized or cut-short file (naming
            the line or session); nothing has been imported.
        InvalidInputError: The file cannot be read.
    """
    checked = CheckedFile(path)
    manifest: list[Manifest] = []
    seen_ids: set[UUID] = set()
    for session_id, group in _sessions(path, step, manifest):
        if session_id in checked.sessions:
            raise ImportRefusedError(
                f"{path}:{group[0][0]}: session {session_id} appears again further on; an "
                "export keeps each session's events together"
            )
        _check_chain(path, session_id, group)
        records = [decoded(path, number, line) for number, line in group]
        _check_times_and_sizes(path, group, records)
        for (number, _), record in zip(group, records, strict=True):
            if record.event_id in seen_ids:
                raise ImportRefusedError(
                    f"{path}:{number}: event id {record.event_id} appears twice in the file; "
                    "nothing was imported"
                )
            seen_ids.add(record.event_id)
        checked.sessions[session_id] = SessionInFile(
            group[0][0], [r.hash for r in records], [r.event_id for r in records]
        )
        if checked.kept is not None:
            checked.kept.extend(records)
            if len(checked.kept) > KEEP:
                checked.kept = None
    if manifest:
        _check_manifest(path, manifest[0], checked.sessions)
        checked.has_manifest = True
    elif not without_manifest:
        raise ImportRefusedError(
            f"{path} does not end with the manifest every export ends with: it was cut short "
            "(or written by a thoughtledger before exports had one, which --without-manifest "
            "imports unchecked); nothing was imported"
        )
    return checked


_Group = list[tuple[int, ExportLine]]


def _sessions(path: Path, step: Progress, manifest: list[Manifest]) -> Iterator[tuple[str, _Group]]:
    """Yield each run of consecutive lines of one session, with their line numbers.

    The manifest, when the file ends with one, is added to ``manifest``.
    """
    group: _Group = []
    read = 0
    for line in read_lines(path):
        step.advance(line.offset - read)
        read = line.offset
        if line.event is None:
            assert line.manifest is not None  # noqa: S101  # a line is one or the other
            manifest.append(line.manifest)
            continue
        if group and group[-1][1].session_id != line.event.session_id:
            yield group[-1][1].session_id, group
            group = []
        group.append((line.number, line.event))
    if group:
        yield group[-1][1].session_id, group


def _check_chain(path: Path, session_id: str, group: _Group) -> None:
    # From the lines as written, before decoding: a tampered line is named as tampered.
    report = verify_rows(session_id, (line.stored_row(n) for n, line in group), None)
    if report.ok:
        return
    at = report.first_bad_position  # the line; None when a version is missing outright
    event = f" (event {report.first_bad_event_id})" if report.first_bad_event_id else ""
    raise ImportRefusedError(
        f"{path}{'' if at is None else f':{at}'}: session {session_id} version "
        f"{report.first_bad_version}{event} does not verify: {report.reason}; "
        "nothing was imported"
    )


def _check_times_and_sizes(path: Path, group: _Group, records: list[RecordedEvent]) -> None:
    for (number, _), record, before in zip(group, records, [None, *records], strict=False):
        where = f"{path}:{number}: session {record.session_id} version {record.version}"
        if before is not None and record.recorded_at < before.recorded_at:
            raise ImportRefusedError(
                f"{where} was recorded at {format_time(record.recorded_at)}, before version "
                f"{before.version} ({format_time(before.recorded_at)}): a session's times "
                "never go backwards; nothing was imported"
            )
        problem = _over_limits(record)
        if problem is not None:
            raise ImportRefusedError(f"{where}: {problem}; nothing was imported")


def _over_limits(record: RecordedEvent) -> str | None:
    """What of an event the API would refuse to record for its size, if anything."""
    event = record.event
    if not isinstance(event, ThoughtEvent):
        return None
    texts = [("thought", event.thought)]
    if isinstance(event, ThoughtGenerated):
        texts.append(("guidance", event.guidance))
    for name, text in texts:
        # Only a long text can be over the byte limit: encode only then (as the API does).
        if len(text) * 4 > DEFAULT_MAX_THOUGHT_BYTES:
            size = len(text.encode("utf-8"))
            if size > DEFAULT_MAX_THOUGHT_BYTES:
                return (
                    f"its {name} is {size} bytes, over the limit of "
                    f"{DEFAULT_MAX_THOUGHT_BYTES} bytes a ledger records"
                )
    if event.branch_id is not None and len(event.branch_id) > MAX_BRANCH_ID_CHARS:
        return (
            f"its branch id is {len(event.branch_id)} characters, over the limit of "
            f"{MAX_BRANCH_ID_CHARS} a ledger records"
        )
    return None


def _check_manifest(path: Path, manifest: Manifest, sessions: dict[str, SessionInFile]) -> None:
    named: set[str] = set()
    for entry in manifest.sessions:
        if entry.session_id in named:
            raise ImportRefusedError(f"{path}: the manifest names session {entry.session_id} twice")
        named.add(entry.session_id)
        found = sessions.get(entry.session_id)
        held = 0 if found is None else len(found.hashes)
        if held < entry.version or held != entry.events:
            raise ImportRefusedError(
                f"{path}: session {entry.session_id} "
                + (f"stops at version {held}" if held else "has no events in the file")
                + f", but the manifest says it ends at version {entry.version} with "
                f"{entry.events} events: the export is incomplete (cut short, or lines were "
                "removed); nothing was imported"
            )
        if held > entry.version or (found is not None and found.hashes[-1] != entry.hash):
            raise ImportRefusedError(
                f"{path}: session {entry.session_id} does not end with the event the manifest "
                f"names (version {entry.version}, hash {entry.hash[:12]}...): the file was "
                "edited; nothing was imported"
            )
    for session_id, found in sessions.items():
        if session_id not in named:
            raise ImportRefusedError(
                f"{path}:{found.line}: session {session_id} is not in the manifest: lines were "
                "added to the export; nothing was imported"
            )


__all__ = ["KEEP", "CheckedFile", "NoProgress", "Progress", "SessionInFile", "check_file"]
