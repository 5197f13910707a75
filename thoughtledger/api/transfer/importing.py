"""Writing a checked export file into a ledger: against what it holds first, then whole sessions.

A file that passed its own checks (:mod:`thoughtledger.api.transfer.check`) is checked
against the
ledger: a session the ledger holds already must hold the very same events (every column of each, see
:meth:`.Importing.already_imported`), and no event to write may use an event id the ledger holds for
another event. Any refusal so far writes nothing.

Only then are events written through the store's ``import_records`` (which checks each call
again, in its transaction). The unit of writing is the session: each is written whole in one
transaction, small ones several to a transaction; only a session of more than
:data:`~thoughtledger.ledger.store.base.MAX_BATCH` events is written in slices of that many. So the
only thing that can stop an import midway is the database failing, or another writer changing the
same sessions meanwhile; what was written is then whole sessions, and after a failure of the
database running the import again finishes it (events the ledger holds are skipped: importing a file
twice changes nothing). A file that redacts thoughts the ledger holds with their text (an export
taken after a redaction, imported into an older copy) removes that text here too.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from uuid import UUID

from thoughtledger.api.errors import ImportRefusedError
from thoughtledger.api.lookup import all_heads
from thoughtledger.api.transfer.check import CheckedFile, Progress
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import (
    ConcurrencyError,
    IntegrityError,
    InvalidInputError,
    StoreError,
)
from thoughtledger.ledger.events import ThoughtRedacted
from thoughtledger.ledger.store.base import MAX_BATCH, EventStore, StreamHead
from thoughtledger.ledger.store.imports import Importing
from thoughtledger.ledger.store.redaction import Redacting

BATCH = 2000
"""Events of small sessions gathered into one ``import_records`` call (one transaction)."""

BULK = 200
"""Above this many sessions in a file, the ledger's heads are read in pages, not one by one."""

ID_PROBE = 10_000
"""Event ids of a file asked of the ledger at a time (whether it holds them already)."""


@dataclass(frozen=True, slots=True)
class PendingImport:
    """A checked file found to agree with the ledger: what is left to write.

    Attributes:
        checked: The file.
        present: How many of each session's events (from version 1) the ledger holds already.
    """

    checked: CheckedFile
    present: dict[str, int]

    @property
    def missing(self) -> int:
        """How many of the file's events the ledger does not hold yet."""
        return self.checked.events - sum(self.present.values())


async def pending_import(
    store: EventStore, imports: Importing, checked: CheckedFile
) -> PendingImport:
    """Check ``checked`` against the ledger; return what is left to write.

    Raises:
        ImportRefusedError: A session differs from the one the ledger holds, or an event to write
            has an id the ledger holds for another event; nothing was written.
        StoreError: The store failed.
    """
    present = await _present(store, imports, checked)
    await _check_event_ids(imports, checked, present)
    return PendingImport(checked, present)


async def write_import(
    imports: Importing, stripping: Redacting, pending: PendingImport, step: Progress
) -> int:
    """Write what the ledger lacks of a checked file, whole sessions at a time.

    Then, where the file redacts thoughts the ledger held before, their text is removed
    (:meth:`~thoughtledger.ledger.store.redaction.Redacting.strip_content`).

    Returns:
        How many events were written.

    Raises:
        ImportRefusedError: Writing stopped midway (whole sessions written): the database failed,
            or another writer changed these sessions meanwhile; or everything was written but
            removing redacted text failed (the ledger still verifies; ``redact`` finishes it).
    """
    checked, written = pending.checked, 0
    redacted: dict[str, list[int]] = {}
    for batch in _batches(_new_by_session(checked.by_session(), pending.present, redacted)):
        try:
            written += await imports.import_records(batch)
        except StoreError as exc:
            # The database failed: a rerun skips what was written and writes the rest.
            raise ImportRefusedError(
                f"import of {checked.path} stopped after {_events(written)}: {exc}; "
                "run it again to finish (what was imported is skipped)"
            ) from exc
        except (ConcurrencyError, IntegrityError, InvalidInputError) as exc:
            # Everything was checked above: only another writer changing these sessions
            # meanwhile gets here, and a rerun finishes only if it wrote the same events (a
            # rerun checks again and says so, writing nothing otherwise): no promise here.
            raise ImportRefusedError(
                f"import of {checked.path} stopped after {_events(written)}: another "
                f"writer changed the ledger meanwhile: {exc}"
            ) from exc
        step.advance(len(batch))
    for session_id, versions in redacted.items():
        # The file redacts thoughts the ledger held with their text: remove it here too.
        try:
            await stripping.strip_content(session_id, versions, vacuum=True)
        except (StoreError, InvalidInputError) as exc:
            raise ImportRefusedError(
                f"{checked.path} was imported ({_events(written)}), but removing the text of "
                f"the thoughts it redacts in session {session_id} failed: {exc}; run "
                f"`thoughtledger redact {session_id}` for them"
            ) from exc
    return written


async def _present(store: EventStore, imports: Importing, checked: CheckedFile) -> dict[str, int]:
    """How many of each session's events the ledger holds: the same ones, or refuse the file."""
    heads = await _heads(store, list(checked.sessions))
    present: dict[str, int] = {}
    for session_id, session in checked.sessions.items():
        if session_id not in heads:
            continue
        try:
            present[session_id] = await imports.already_imported(session_id, session.hashes)
        except InvalidInputError as exc:
            raise ImportRefusedError(f"{checked.path}: {exc}") from exc
    return present


async def _heads(store: EventStore, session_ids: list[str]) -> dict[str, StreamHead]:
    """The ledger's heads of these sessions: one query each for a few, pages of all for many."""
    if len(session_ids) <= BULK:
        found = [await store.stream_head(session_id) for session_id in session_ids]
        return {head.session_id: head for head in found if head is not None}
    wanted = set(session_ids)
    return {head.session_id: head for head in await all_heads(store) if head.session_id in wanted}


async def _check_event_ids(
    imports: Importing, checked: CheckedFile, present: dict[str, int]
) -> None:
    """Refuse the file when an event to write has an id the ledger holds for another event."""
    chunk: list[UUID] = []

    async def probe() -> None:
        reused = await imports.recorded_event_ids(chunk)
        chunk.clear()
        for session_id, session in checked.sessions.items():
            for version, event_id in enumerate(session.event_ids, start=1):
                if event_id in reused:
                    raise ImportRefusedError(
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


def _new_by_session(
    sessions: Iterable[list[RecordedEvent]], present: dict[str, int], redacted: dict[str, list[int]]
) -> Iterator[list[RecordedEvent]]:
    """Each session's events the ledger does not hold yet (sessions it holds whole are left out).

    Fills ``redacted``: for each session the ledger holds part of, the versions the file's new
    ``thought.redacted`` events name (the ledger may hold those thoughts with their text).
    """
    for records in sessions:
        held = present.get(records[0].session_id, 0)
        new = records[held:]
        if held:
            named = [r.event.version for r in new if isinstance(r.event, ThoughtRedacted)]
            if named:
                redacted[records[0].session_id] = named
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


def _events(count: int) -> str:
    return f"{count} event" if count == 1 else f"{count} events"


__all__ = ["BATCH", "BULK", "ID_PROBE", "PendingImport", "pending_import", "write_import"]
