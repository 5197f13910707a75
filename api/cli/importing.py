"""``thoughtledger import``: load an export, re-verifying every chain before writing anything.

First the file alone: every line is parsed and every session's hash chain verified from its first
event, before the ledger is even opened, so a tampered or malformed file changes nothing. Then
each session is checked against the ledger: one it already holds must hold the same events (the
same hash at the last version both have). Only then are events written, in batches, through the
store's ``import_records``, which keeps every event's id, time and hash and checks each batch
again. Events the ledger already holds are skipped: importing a file twice changes nothing, and an
interrupted import is finished by running it again.
"""

import argparse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from api.cli.common import (
    EXIT_OK,
    CliError,
    Commands,
    Step,
    Ui,
    UsageError,
    add_json_option,
    all_heads,
    command,
    ledger_from,
    plural,
)
from api.cli.jsonl import ExportLine, decoded, read_lines
from api.service import Ledger
from ledger.chain import verify_rows
from ledger.envelope import RecordedEvent
from ledger.errors import ConcurrencyError, IntegrityError, InvalidInputError
from ledger.store.base import EventStore, StreamHead

BATCH = 2000
"""Events per ``import_records`` call (one transaction each)."""

BULK = 200
"""Above this many sessions in a file, the ledger's heads are read in pages, not one by one."""

KEEP = 100_000
"""Files of up to this many events are held in memory after checking, not read again."""


def register(commands: Commands) -> None:
    """Add the ``import`` command."""
    parser = command(commands, "import", "load an export file, refusing any tampered chain", run)
    parser.add_argument("file", metavar="FILE", help="a file written by thoughtledger export")
    add_json_option(parser)


@dataclass
class _File:
    """What checking the file learnt: each session's hashes in version order, and the events."""

    path: Path
    hashes: dict[str, list[str]] = field(default_factory=dict)
    kept: list[RecordedEvent] | None = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(len(hashes) for hashes in self.hashes.values())

    def records(self) -> Iterable[RecordedEvent]:
        if self.kept is not None:
            return self.kept
        return (decoded(self.path, number, line) for number, _, line in read_lines(self.path))


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Import the file; refuse it whole when any chain in it does not verify.

    Raises:
        UsageError: The path is missing or a directory.
        CliError: The file is not an export, a chain does not verify, or it conflicts with the
            ledger (nothing written); or a batch was refused midway (rerun to finish).
        LedgerError: The ledger failed.
    """
    path, size = _input(args.file)
    with ui.progress(f"Checking {path.name}", total=size, in_bytes=True) as step:
        checked = _check(path, step)
    async with ledger_from(args, read_only=False) as ledger:
        heads = await _heads(ledger, list(checked.hashes))
        present = {
            session_id: await _already_here(ledger.store, path, hashes, heads.get(session_id))
            for session_id, hashes in checked.hashes.items()
        }
        missing = checked.events - sum(present.values())
        with ui.progress(f"Importing {path.name}", total=missing) as step:
            written = await _write(ledger.store, checked, present, step)
    sessions, events = len(checked.hashes), checked.events
    if args.json:
        ui.json(
            {
                "file": str(path),
                "sessions": sessions,
                "events": events,
                "imported": written,
                "alreadyPresent": events - written,
            }
        )
    elif written:
        ui.out.print(
            f"imported {plural(written, 'event')} of {plural(sessions, 'session')} from {path} "
            f"({events - written} already in the ledger); every chain verifies"
        )
    else:
        ui.out.print(
            f"nothing to import: the ledger already holds all {plural(events, 'event')} of "
            f"{plural(sessions, 'session')} in {path}"
        )
    return EXIT_OK


def _input(given: str) -> tuple[Path, int]:
    path = Path(given)
    if path.is_dir():
        raise UsageError(f"{path} is a directory; name an export file")
    if not path.exists():
        raise UsageError(f"no such file: {path}")
    return path, path.stat().st_size


def _check(path: Path, step: Step) -> _File:
    checked = _File(path)
    for session_id, group in _sessions(path, step):
        if session_id in checked.hashes:
            raise CliError(
                f"{path}:{group[0][0]}: session {session_id} appears again further on; an "
                "export keeps each session's events together"
            )
        # The chain first, from the lines as written: a tampered line is named as tampered.
        report = verify_rows(session_id, (line.stored_row(n) for n, line in group), None)
        if not report.ok:
            at = report.first_bad_position  # the line; None when a version is missing outright
            event = f" (event {report.first_bad_event_id})" if report.first_bad_event_id else ""
            raise CliError(
                f"{path}{'' if at is None else f':{at}'}: session {session_id} version "
                f"{report.first_bad_version}{event} does not verify: {report.reason}; "
                "nothing was imported"
            )
        records = [decoded(path, number, line) for number, line in group]
        checked.hashes[session_id] = [record.hash for record in records]
        if checked.kept is not None:
            checked.kept.extend(records)
            if len(checked.kept) > KEEP:
                checked.kept = None
    return checked


def _sessions(path: Path, step: Step) -> Iterator[tuple[str, list[tuple[int, ExportLine]]]]:
    """Yield each run of consecutive lines of one session, with their line numbers."""
    group: list[tuple[int, ExportLine]] = []
    read = 0
    for number, offset, line in read_lines(path):
        step.advance(offset - read)
        read = offset
        if group and group[-1][1].session_id != line.session_id:
            yield group[-1][1].session_id, group
            group = []
        group.append((number, line))
    if group:
        yield group[-1][1].session_id, group


async def _heads(ledger: Ledger, session_ids: list[str]) -> dict[str, StreamHead]:
    """The ledger's heads of these sessions: one query each for a few, pages of all for many."""
    if len(session_ids) <= BULK:
        found = [await ledger.store.stream_head(session_id) for session_id in session_ids]
        return {head.session_id: head for head in found if head is not None}
    wanted = set(session_ids)
    return {head.session_id: head for head in await all_heads(ledger) if head.session_id in wanted}


async def _already_here(
    store: EventStore, path: Path, hashes: list[str], head: StreamHead | None
) -> int:
    """How many of a session's events the ledger holds already (the same ones, or refuse)."""
    if head is None:
        return 0
    common = min(head.version, len(hashes))
    if common == head.version:
        stored = head.hash
    else:
        window = await store.read_stream(
            head.session_id, after_version=common - 1, to_version=common
        )
        stored = window[0].hash
    if stored != hashes[common - 1]:
        raise CliError(
            f"session {head.session_id} in the ledger holds other events than in {path} (they "
            f"differ by version {common}); nothing was imported"
        )
    return common


async def _write(store: EventStore, checked: _File, present: dict[str, int], step: Step) -> int:
    written = 0
    batch: list[RecordedEvent] = []

    async def flush() -> None:
        nonlocal written, batch
        try:
            written += await store.import_records(batch)
        except (ConcurrencyError, IntegrityError, InvalidInputError) as exc:
            # Checked above: only another writer racing this import, or an event id already
            # used by another event of this ledger, can get here. What was written is whole.
            raise CliError(
                f"import of {checked.path} stopped after {written} events: {exc}; run it again "
                "to finish (importing is idempotent)"
            ) from exc
        step.advance(len(batch))
        batch = []

    for record in checked.records():
        if record.version > present.get(record.session_id, 0):
            batch.append(record)
            if len(batch) == BATCH:
                await flush()
    if batch:
        await flush()
    return written
