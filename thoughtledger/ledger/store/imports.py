"""Importing events recorded elsewhere (a store capability): the protocol, and its shared rules.

:meth:`Importing.import_records` runs :func:`check_import` on the records alone, then each backend,
inside its write transaction, plans every session with :func:`plan_import` from the stored head,
reads the stored rows the plan names and hands them to :meth:`ImportPlan.check`. The same
comparison (:func:`check_stored`) serves :meth:`Importing.already_imported`, which tells an
importer beforehand how much of a session a store holds (:func:`held_versions`, the one rule here
that reads, through the store's own contract). Every other rule is pure.

An event counts as already stored only when the stored one is the same in every column: its
stored columns must hash to its stored hash, and that hash must be the imported one (a hash covers
every column, the previous hash included). Matching hashes alone would not do: an event edited in
place, with its hash column left alone, would pass for the imported one.
"""

from abc import abstractmethod
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol, runtime_checkable
from uuid import UUID

from thoughtledger.ledger.chain import GENESIS_HASH, StoredRow, VerifyReport
from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.content import ContentError
from thoughtledger.ledger.envelope import RecordedEvent, parse_time
from thoughtledger.ledger.errors import EventDecodingError, IntegrityError, InvalidInputError
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.checks import MAX_BATCH


@runtime_checkable
class Importing(Protocol):
    """Storing events exported from a ledger exactly as they were recorded (a store capability)."""

    @abstractmethod
    async def import_records(self, records: Sequence[RecordedEvent]) -> int:
        """Store events exported from a ledger exactly as they were recorded, hashes included.

        The lossless counterpart of an append: event ids, recorded times, payloads and hashes
        are kept as given (only positions are assigned anew), so imported chains verify as they
        did where they were recorded. Each session's records are checked before anything is
        written (:func:`check_import`): every hash is recomputed, every link followed, and times
        never go backwards. Records the store already holds are skipped, so importing twice
        writes nothing; a stored event counts as held only when it is the same in every column
        (see the module docstring), else the import is refused. The whole call is atomic.

        Args:
            records: At most :data:`~thoughtledger.ledger.store.checks.MAX_BATCH` events, each
                session's in consecutive version order. A session may start at version 1, or at
                a version whose predecessor is already stored with the hash the first record
                links to (a long session can be imported in several calls). ``position`` and
                the decoded ``event`` are ignored: the ``payload`` is what is stored and hashed.

        Returns:
            How many events were written (0 when the store held them all already).

        Raises:
            IntegrityError: A record's hash does not match its contents, or it does not link to
                the record before it; nothing was written.
            EventDecodingError: A payload cannot be decoded; nothing was written.
            InvalidInputError: Too many records, a malformed session id or time, versions that are
                not consecutive, a time before the previous event's, a session that would be left
                with a gap, a stored event that differs from the imported one at its version, or
                an event id recorded elsewhere; nothing was written.
            StoreError: The backend failed; nothing was written.
        """

    @abstractmethod
    async def already_imported(self, session_id: str, hashes: Sequence[str]) -> int:
        """Return how many of a session's events, from version 1, the store holds already.

        An importer asks this before writing anything, so that a file whose sessions the store
        holds otherwise is refused whole. Every stored event up to ``len(hashes)`` is compared in
        full, as :meth:`import_records` compares them (:func:`held_versions`).

        Args:
            session_id: The session.
            hashes: The hashes of the events to import, versions 1, 2, 3...

        Returns:
            How many of them the store holds (its first that many versions).

        Raises:
            InvalidInputError: A malformed session id, or a stored event that differs from the
                imported one (the message names the version).
            EventDecodingError: A stored event cannot be decoded although its hash verifies.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def recorded_event_ids(self, event_ids: Collection[UUID]) -> set[UUID]:
        """Return those of ``event_ids`` the store holds (event ids are unique in a store).

        An importer checks the events it is about to write with this before writing any, so
        that an event id used here by another event refuses the file whole.

        Raises:
            StoreError: The backend failed.
        """


class _Reads(Protocol):
    """What :func:`held_versions` reads of a store (two methods of its contract)."""

    async def read_stream(
        self,
        session_id: str,
        *,
        after_version: int = 0,
        to_version: int | None = None,
        limit: int | None = None,
    ) -> list[RecordedEvent]: ...

    async def verify(self, session_id: str) -> VerifyReport: ...


class StoreImports(Importing):
    """A store's :class:`Importing` (its ``imports``): the shared checks, and the backend's write.

    Args:
        reads: The store's log, which :meth:`already_imported` compares with.
        write: Stores checked records atomically, by session (the backend's); returns how many
            events were written.
        event_ids: Which of the given event ids the store holds (the backend's).
        max_event_bytes: The store's largest accepted payload.
        primary: A block within which the backend's reads go where the import will write (a
            hot standby's primary); none by default.
    """

    def __init__(
        self,
        reads: _Reads,
        write: Callable[[dict[str, list[RecordedEvent]]], Awaitable[int]],
        event_ids: Callable[[Collection[UUID]], Awaitable[set[UUID]]],
        *,
        max_event_bytes: int,
        primary: Callable[[], AbstractContextManager[object]] = nullcontext,
    ) -> None:
        self._reads = reads
        self._write = write
        self._event_ids = event_ids
        self._max_event_bytes = max_event_bytes
        self._primary = primary

    async def import_records(self, records: Sequence[RecordedEvent]) -> int:
        """See :meth:`Importing.import_records`."""
        streams = check_import(records, max_event_bytes=self._max_event_bytes)
        return await self._write(streams) if streams else 0

    async def already_imported(self, session_id: str, hashes: Sequence[str]) -> int:
        """See :meth:`Importing.already_imported`."""
        with self._primary():
            return await held_versions(self._reads, session_id, hashes)

    async def recorded_event_ids(self, event_ids: Collection[UUID]) -> set[UUID]:
        """See :meth:`Importing.recorded_event_ids`."""
        with self._primary():
            return await self._event_ids(event_ids)


def check_import(
    records: Sequence[RecordedEvent], *, max_event_bytes: int
) -> dict[str, list[RecordedEvent]]:
    """Check records to import, trusting nothing, and group them by session (in first-seen order).

    A thought's text that was redacted (removed) is accepted as the hash allows; whether a
    ``thought.redacted`` event explains it is for whoever holds the whole session to check (an
    importer of a file checks it, see :mod:`thoughtledger.api.transfer.check`;
    :meth:`.EventStore.verify` does).

    Raises:
        IntegrityError: A hash does not match its record, a thought's text does not match its
            digest, or a record does not link to the one before it (a session's version 1 must
            link to the genesis hash).
        EventDecodingError: A payload cannot be decoded.
        InvalidInputError: More than :data:`MAX_BATCH` records, a malformed id or time, an
            oversize payload, a repeated event id, versions that are not consecutive, or a time
            before the previous event's.
    """
    if len(records) > MAX_BATCH:
        raise InvalidInputError(f"an import carries at most {MAX_BATCH} events")
    streams: dict[str, list[RecordedEvent]] = {}
    seen_ids: set[UUID] = set()
    for record in records:
        check_id(record.session_id)
        if not isinstance(record.event_id, UUID):
            raise InvalidInputError(f"event id {record.event_id!r} is not a UUID")
        if record.event_id in seen_ids:
            raise InvalidInputError(f"event id {record.event_id} appears twice")
        seen_ids.add(record.event_id)
        if record.recorded_at.tzinfo is None:
            raise InvalidInputError(f"event {record.event_id} has a recorded time without a zone")
        if len(record.payload.encode("utf-8", "surrogatepass")) > max_event_bytes:
            raise InvalidInputError(f"event {record.event_id} is over {max_event_bytes} bytes")
        stream = streams.setdefault(record.session_id, [])
        where = f"session {record.session_id!r} version {record.version} ({record.event_id})"
        if stream:
            if record.version != stream[-1].version + 1:
                raise InvalidInputError(f"{where}: versions must be consecutive and in order")
            if record.prev_hash != stream[-1].hash:
                raise IntegrityError(f"{where} does not link to the event before it")
            if record.recorded_at < stream[-1].recorded_at:
                raise InvalidInputError(
                    f"{where} was recorded before the event before it: times within a session "
                    "never go backwards"
                )
        elif record.version < 1 or (record.version == 1 and record.prev_hash != GENESIS_HASH):
            raise IntegrityError(f"{where} does not start a chain")
        try:
            actual = StoredRow.of(record).digest()
        except UnicodeEncodeError:
            actual = None
        except ContentError as exc:
            raise IntegrityError(f"{where}: {exc}") from exc
        if actual != record.hash:
            raise IntegrityError(f"{where}: hash does not match the event's contents")
        # Decoded after the hash is checked, so a tampered payload is named as such; the event
        # kept is the payload's, whatever the caller put beside it.
        event = decode_payload(record.event_type, record.schema_version, record.payload)
        stream.append(replace(record, event=event))
    return streams


def check_stored(
    session_id: str, hashes: Sequence[str], rows: Iterable[StoredRow], *, first_version: int
) -> int:
    """Check that stored ``rows`` are, one for one, the events ``hashes`` name.

    Args:
        session_id: The session.
        hashes: The imported events' hashes, in version order from ``first_version``.
        rows: Stored rows of the session, in version order from ``first_version``; at most as many
            as ``hashes`` (fewer when the store holds fewer).
        first_version: The version of the first hash and the first row.

    Returns:
        How many rows were compared.

    Raises:
        InvalidInputError: A stored event differs from the imported one in any column, or a
            version is missing from the stored rows; the message names the version.
    """
    compared = 0
    for offset, row in enumerate(rows):
        version = first_version + offset
        if offset >= len(hashes) or row.version != version or row.hash != hashes[offset]:
            raise import_conflict(session_id, version)
        try:
            digest = row.digest()
        except ValueError:  # not valid Unicode, or content that does not match its digest
            digest = None
        if digest != row.hash:
            raise import_conflict(session_id, version)
        compared += 1
    return compared


async def held_versions(store: _Reads, session_id: str, hashes: Sequence[str]) -> int:
    """Return how many of a session's events, from version 1, ``store`` holds already.

    See :meth:`Importing.already_imported`.

    Raises:
        InvalidInputError: A malformed session id, or a stored event that differs from the
            imported one (the message names the version).
        EventDecodingError: A stored event cannot be decoded although its hash verifies.
        StoreError: The backend failed.
    """
    if not hashes:
        return 0
    try:
        stored = await store.read_stream(session_id, to_version=len(hashes))
    except InvalidInputError:
        raise
    except (EventDecodingError, ValueError) as exc:
        # An event edited in place may no longer decode: name the first that does not verify.
        report = await store.verify(session_id)
        if report.ok or report.first_bad_version is None:
            raise
        raise import_conflict(session_id, report.first_bad_version) from exc
    rows = (StoredRow.of(record) for record in stored)
    return check_stored(session_id, hashes, rows, first_version=1)


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What importing one session's checked records needs, given the stored head.

    Attributes:
        session_id: The session.
        records: Its checked records, in version order.
        stored_from: The first stored version to read and :meth:`check` (0: nothing to read).
        stored_to: The last stored version to read and check.
        new: The records past the stored head: what to write.
        head_differs: Whether the stored head's hash is not the one the records give its
            version (checked after the rows, so that a conflict names the first version that
            differs).
    """

    session_id: str
    records: Sequence[RecordedEvent]
    stored_from: int
    stored_to: int
    new: list[RecordedEvent]
    head_differs: bool = False

    def check(self, rows: Sequence[StoredRow]) -> None:
        """Check the stored rows of versions ``stored_from`` to ``stored_to`` against the records.

        The stored events the records overlap must be the same events, and the stored event the
        first record links to (when the records continue a stored session) must be the one it
        links to, recorded no later than it.

        Raises:
            InvalidInputError: A stored event differs, is missing, or the first record was
                recorded before the stored event it follows.
        """
        if not self.stored_from:
            return  # nothing stored: the genesis hash is the head, which check_import holds
        first = self.records[0]
        follows = self.stored_from < first.version  # the first row is the one first links to
        expected = [r.hash for r in self.records[max(self.stored_from - first.version, 0) :]]
        if follows:
            expected.insert(0, first.prev_hash)
        count = self.stored_to - self.stored_from + 1
        compared = check_stored(
            self.session_id, expected[:count], rows, first_version=self.stored_from
        )
        if compared < count:
            raise import_conflict(self.session_id, self.stored_from + compared)
        if self.head_differs:
            raise import_conflict(self.session_id, self.stored_to)
        if follows and _time(self.session_id, rows[0]) > first.recorded_at:
            raise InvalidInputError(
                f"session {self.session_id!r} version {first.version} ({first.event_id}) was "
                f"recorded before the stored version {self.stored_from}: times within a session "
                "never go backwards"
            )


def plan_import(
    session_id: str, records: Sequence[RecordedEvent], head_version: int, head_hash: str
) -> ImportPlan:
    """Decide what to write of one session's checked records onto the stored head.

    Args:
        session_id: The session.
        records: Its records, checked by :func:`check_import`.
        head_version: The stored head's version (0 when the session is not stored).
        head_hash: The stored head's hash (the genesis hash when it is not stored).

    Returns:
        The plan: the stored rows the backend must read and check, and the records to write.

    Raises:
        InvalidInputError: The records start past the stored head, leaving a gap.
    """
    first, last = records[0].version, records[-1].version
    if head_version < first - 1:
        raise InvalidInputError(
            f"session {session_id!r} holds {head_version} events here; the imported ones start "
            f"at version {first}: import its earlier events first"
        )
    head_differs = False
    if head_version <= last:
        # The hash the records give the stored head's version (version 1's predecessor is the
        # genesis hash, which check_import holds them to).
        at_head = (
            records[0].prev_hash
            if head_version == first - 1
            else records[head_version - first].hash
        )
        head_differs = head_hash != at_head
    return ImportPlan(
        session_id=session_id,
        records=records,
        stored_from=max(first - 1, 1) if head_version else 0,
        stored_to=min(head_version, last),
        new=list(records[head_version - first + 1 :]),
        head_differs=head_differs,
    )


def _time(session_id: str, row: StoredRow) -> datetime:
    try:
        moment = parse_time(row.recorded_at)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:  # not a time thoughtledger records
        raise import_conflict(session_id, row.version)
    return moment


def import_conflict(session_id: str, version: int) -> InvalidInputError:
    """The error for a stored session whose event at ``version`` is not the imported one."""
    return InvalidInputError(
        f"session {session_id!r} already holds another event at version {version} than the "
        "imported one (its contents or hash differ); nothing was imported"
    )


__all__ = [
    "ImportPlan",
    "Importing",
    "StoreImports",
    "check_import",
    "check_stored",
    "held_versions",
    "import_conflict",
    "plan_import",
]
