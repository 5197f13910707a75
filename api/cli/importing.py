"""``thoughtledger import``: load an export, checking everything before writing anything.

First the file alone (:mod:`api.cli.import_check`): every line parsed, every chain verified from
its first event, times in order, sizes within what the API records, and the manifest accounting
for every session, before the ledger is even opened. Then the file against the ledger: a session
the ledger holds already must hold the very same events (every column of each, see
:meth:`EventStore.already_imported`), and no event to write may use an event id the ledger holds
for another event. Any refusal so far writes nothing.

Only then are events written through the store's ``import_records`` (which checks each call
again, in its transaction). The unit of writing is the session: each is written whole in one
transaction, small ones several to a transaction; only a session of more than
:data:`~ledger.store.base.MAX_BATCH` events is written in slices of that many. So the only thing
that can stop an import midway is the database failing, or another writer changing the same
sessions meanwhile; what was written is then whole sessions, and after a failure of the database
running the import again finishes it (events the ledger holds are skipped: importing a file twice
changes nothing).
"""

import argparse
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from uuid import UUID

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
from api.cli.import_check import CheckedFile, check_file
from api.service import Ledger
from ledger.envelope import RecordedEvent
from ledger.errors import ConcurrencyError, IntegrityError, InvalidInputError, StoreError
from ledger.store.base import MAX_BATCH, EventStore, StreamHead

BATCH = 2000
"""Events of small sessions gathered into one ``import_records`` call (one transaction)."""

BULK = 200
"""Above this many sessions in a file, the ledger's heads are read in pages, not one by one."""

ID_PROBE = 10_000
"""Event ids of a file asked of the ledger at a time (whether it holds them already)."""


def register(commands: Commands) -> None:
    """Add the ``import`` command."""
    parser = command(
        commands,
        "import",
        "load an export file; a tampered, cut-short or conflicting one changes nothing",
        run,
    )
    parser.add_argument("file", metavar="FILE", help="a file written by thoughtledger export")
    parser.add_argument(
        "--without-manifest",
        action="store_true",
        help="accept a file with no manifest (written before exports had one); whether it "
        "was cut short cannot be checked",
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Import the file; refuse it whole when anything in it, or about it, is wrong.

    Raises:
        UsageError: The path is missing or a directory.
        CliError: The file is not a whole, untampered export within the API's limits, or it
            conflicts with the ledger (nothing written); or writing stopped midway (whole
            sessions written).
        LedgerError: The ledger failed before anything was written.
    """
    path, size = _input(args.file)
    with ui.progress(f"Checking {path.name}", total=size, in_bytes=True) as step:
        checked = check_file(path, step, without_manifest=args.without_manifest)
    if not checked.has_manifest:
        sys.stderr.write(
            f"thoughtledger: warning: {path} has no manifest: whether it was cut short cannot "
            "be checked\n"
        )
    async with ledger_from(args, read_only=False) as ledger:
        present = await _present(ledger, checked)
        await _check_event_ids(ledger.store, checked, present)
        missing = checked.events - sum(present.values())
        with ui.progress(f"Importing {path.name}", total=missing) as step:
            written = await _write(ledger.store, checked, present, step)
    sessions, events = len(checked.sessions), checked.events
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


async def _present(ledger: Ledger, checked: CheckedFile) -> dict[str, int]:
    """How many of each session's events the ledger holds: the same ones, or refuse the file."""
    heads = await _heads(ledger, list(checked.sessions))
    present: dict[str, int] = {}
    for session_id, session in checked.sessions.items():
        if session_id not in heads:
            continue
        try:
            present[session_id] = await ledger.store.already_imported(session_id, session.hashes)
        except InvalidInputError as exc:
            raise CliError(f"{checked.path}: {exc}") from exc
    return present


async def _heads(ledger: Ledger, session_ids: list[str]) -> dict[str, StreamHead]:
    """The ledger's heads of these sessions: one query each for a few, pages of all for many."""
    if len(session_ids) <= BULK:
        found = [await ledger.store.stream_head(session_id) for session_id in session_ids]
        return {head.session_id: head for head in found if head is not None}
    wanted = set(session_ids)
    return {head.session_id: head for head in await all_heads(ledger) if head.session_id in wanted}


async def _check_event_ids(
    store: EventStore, checked: CheckedFile, present: dict[str, int]
) -> None:
    """Refuse the file when an event to write has an id the ledger holds for another event."""
    chunk: list[UUID] = []

    async def probe() -> None:
        reused = await store.recorded_event_ids(chunk)
        chunk.clear()
        for session_id, session in checked.sessions.items():
            for version, event_id in enumerate(session.event_ids, start=1):
                if event_id in reused:
                    raise CliError(
                        f"{checked.path}: session {session_id} version {version} has event id "
                        f"{event_id}, which this ledger holds for another event; nothing was "
                        "imported"
                    )

    for session_id, session in checked.sessions.items():
        chunk.extend(session.event_ids[present.get(session_id, 0) :])
        if len(chunk) >= ID_PROBE:
            await probe()
    if chunk:
        await probe()


async def _write(
    store: EventStore, checked: CheckedFile, present: dict[str, int], step: Step
) -> int:
    written = 0
    for batch in _batches(_new_by_session(checked.by_session(), present)):
        try:
            written += await store.import_records(batch)
        except StoreError as exc:
            # The database failed: a rerun skips what was written and writes the rest.
            raise CliError(
                f"import of {checked.path} stopped after {plural(written, 'event')}: {exc}; "
                "run it again to finish (what was imported is skipped)"
            ) from exc
        except (ConcurrencyError, IntegrityError, InvalidInputError) as exc:
            # Everything was checked above: only another writer changing these sessions
            # meanwhile gets here, and a rerun finishes only if it wrote the same events (a
            # rerun checks again and says so, writing nothing otherwise): no promise here.
            raise CliError(
                f"import of {checked.path} stopped after {plural(written, 'event')}: another "
                f"writer changed the ledger meanwhile: {exc}"
            ) from exc
        step.advance(len(batch))
    return written


def _new_by_session(
    sessions: Iterable[list[RecordedEvent]], present: dict[str, int]
) -> Iterator[list[RecordedEvent]]:
    """Each session's events the ledger does not hold yet (sessions it holds whole are left out)."""
    for records in sessions:
        new = records[present.get(records[0].session_id, 0) :]
        if new:
            yield new


def _batches(sessions: Iterable[list[RecordedEvent]]) -> Iterator[list[RecordedEvent]]:
    """Whole sessions gathered up to :data:`BATCH` events; a longer one alone, or in slices."""
    batch: list[RecordedEvent] = []
    for new in sessions:
        if batch and len(batch) + len(new) > BATCH:
            yield batch
            batch = []
        if len(new) > MAX_BATCH:
            for start in range(0, len(new), MAX_BATCH):
                yield new[start : start + MAX_BATCH]
            continue
        batch.extend(new)
    if batch:
        yield batch
