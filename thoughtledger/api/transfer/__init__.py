"""Moving sessions between ledgers: an export file written, checked, and imported.

The file's format is :mod:`thoughtledger.api.transfer.jsonl`; :func:`check_file` checks a
file on
its own (before any ledger is opened); :class:`Transfer`, a part of the facade
(:class:`thoughtledger.api.Ledger` is built on it), exports sessions and imports a checked
file.
"""

from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import TypeVar

from thoughtledger.api.errors import ImportRefusedError
from thoughtledger.api.lookup import all_heads
from thoughtledger.api.transfer.check import CheckedFile, NoProgress, Progress, check_file
from thoughtledger.api.transfer.importing import PendingImport, pending_import, write_import
from thoughtledger.ledger.envelope import EventRow, LogRow, RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.ledger.store.imports import Importing
from thoughtledger.ledger.store.redaction import Redacting
from thoughtledger.ledger.store.rows import RowReads
from thoughtledger.projections.action_rows import ActionRow, ActionRowFold
from thoughtledger.projections.annotation_rows import AnnotationRow, AnnotationRowFold
from thoughtledger.projections.thought_rows import ThoughtRow, ThoughtRowFold

_Row = TypeVar("_Row")

EXPORT_SLICE = 10_000
"""Most events :meth:`Transfer.export` yields at once (a longer session comes in slices)."""


class Transfer:
    """A ledger's export and import: ``ledger.transfer.export()``, ``.write_import(...)``.

    Args:
        store: The log sessions are read from.
        rows: The log's rows, undecoded (the whole log is exported as rows).
        imports: Where events recorded elsewhere are written.
        stripping: Removes the text of thoughts an imported file redacts.
        after_import: Run after an import wrote events (the loop marks then take them in).
    """

    def __init__(
        self,
        store: EventStore,
        rows: RowReads,
        imports: Importing,
        stripping: Redacting,
        after_import: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self._store = store
        self._rows = rows
        self._imports = imports
        self._stripping = stripping
        self._after_import = after_import

    def is_own_file(self, path: Path) -> bool:
        """Whether writing ``path`` would write over the ledger's own storage.

        Raises:
            OSError: The path cannot be resolved.
        """
        return self._store.holds_file(path)

    async def export(
        self, session_ids: Iterable[str] | None = None, *, slice_size: int = EXPORT_SLICE
    ) -> AsyncGenerator[list[RecordedEvent]]:
        """Yield each session's events as they were recorded, in slices of a session at a time.

        A session comes whole in one list, unless it is longer than ``slice_size`` events:
        then in consecutive lists of that many (the last one shorter), so that memory is
        bounded by the slice, not by the session. Each session is read up to the version its
        head had when its first slice was read.

        Args:
            session_ids: The sessions, in the order to export them; ``None`` exports every
                session, in id order.
            slice_size: The most events one list holds (small slices let a server answer
                other requests between them).

        Raises:
            InvalidInputError: A malformed id, or a slice size below 1.
            StoreError: The store failed.
        """
        if isinstance(slice_size, bool) or not isinstance(slice_size, int) or slice_size < 1:
            raise InvalidInputError(f"a slice holds at least 1 event, not {slice_size!r}")
        if session_ids is None:
            session_ids = [head.session_id for head in await all_heads(self._store)]
        for session_id in session_ids:
            head = await self._store.stream_head(session_id)
            if head is None:
                yield []
                continue
            after = 0
            while after < head.version:
                records = await self._store.read_stream(
                    session_id, after_version=after, to_version=head.version, limit=slice_size
                )
                if not records:
                    break
                yield records
                after = records[-1].version

    async def thought_rows(
        self, *, page: int = 20_000
    ) -> AsyncGenerator[tuple[int, list[ThoughtRow]]]:
        """Yield every thought as one flat row (the ``tl_thoughts`` view's), a page at a time.

        Reads the whole log in position order, ``page`` events at a time, so that memory stays
        bounded whatever the ledger's size (see :mod:`thoughtledger.projections.thought_rows`).

        Yields:
            How many events the page read, and the rows of its thoughts.

        Raises:
            StoreError: The store failed.
        """
        async for read in self._folded(page, ThoughtRowFold().fold):
            yield read

    async def annotation_rows(
        self, *, page: int = 20_000
    ) -> AsyncGenerator[tuple[int, list[AnnotationRow]]]:
        """Yield every annotation as one flat row (the ``tl_annotations`` view's), a page at a time.

        Yields:
            How many events the page read, and the rows of its annotations.

        Raises:
            StoreError: The store failed.
        """
        async for read in self._folded(page, AnnotationRowFold().fold):
            yield read

    async def action_rows(
        self, *, page: int = 20_000
    ) -> AsyncGenerator[tuple[int, list[ActionRow]]]:
        """Yield every action as one flat row (the ``tl_actions`` view's), a page at a time.

        Yields:
            How many events the page read, and the rows of its actions.

        Raises:
            StoreError: The store failed.
        """
        async for read in self._folded(page, ActionRowFold().fold):
            yield read

    async def _folded(
        self, page: int, fold: Callable[[list[LogRow]], list[_Row]]
    ) -> AsyncGenerator[tuple[int, list[_Row]]]:
        """The whole log, ``page`` rows at a time, each page folded (a fold's state carries on)."""
        after = 0
        while rows := await self._rows.read_all_rows(after_position=after, limit=page):
            after = rows[-1].position
            yield len(rows), fold(rows)

    async def last_position(self) -> int:
        """Return the position of the log's last event (0: an empty log).

        Found by probing, about twice the logarithm of the position in one-row reads, so
        that its cost does not grow with the log; a live feed that starts "from now" asks it.

        Raises:
            StoreError: The store failed.
        """
        probe = 1
        while await self._rows.read_all_rows(after_position=probe, limit=1):
            probe *= 2
        # Some event lies after low (or low is 0); none after high: narrow the gap.
        low, high = probe // 2, probe
        while high - low > 1:
            middle = (low + high) // 2
            if await self._rows.read_all_rows(after_position=middle, limit=1):
                low = middle
            else:
                high = middle
        rows = await self._rows.read_all_rows(after_position=low, limit=1)
        return rows[0].position if rows else 0

    async def event_rows(self, *, page: int = 500) -> AsyncGenerator[list[EventRow]]:
        """Yield every event as stored (undecoded, with its id and hashes), a page at a time.

        Reads the whole log in position order, ``page`` events at a time, so that memory stays
        bounded whatever the ledger's size; a bulk fold parses what it needs of each payload
        (see :mod:`thoughtledger.adapters.otel.log`).

        Raises:
            InvalidInputError: A page size below 1.
            StoreError: The store failed.
        """
        after = 0
        while rows := await self._rows.read_all_event_rows(after_position=after, limit=page):
            after = rows[-1].position
            yield rows

    async def session_rows(
        self, session_id: str, *, after_version: int, to_version: int
    ) -> AsyncGenerator[list[EventRow]]:
        """Yield a session's events after ``after_version`` up to ``to_version``, as stored.

        In slices of at most :data:`EXPORT_SLICE` events, each read from the session's stream
        (and so visible however recently committed).

        Raises:
            InvalidInputError: A malformed id or bound.
            StoreError: The store failed.
        """
        while after_version < to_version:
            records = await self._store.read_stream(
                session_id, after_version=after_version, to_version=to_version, limit=EXPORT_SLICE
            )
            if not records:
                return
            yield [EventRow.of(record) for record in records]
            after_version = records[-1].version

    async def pending_import(self, checked: CheckedFile) -> PendingImport:
        """Check a checked export file against this ledger: what is left to import.

        Raises:
            ImportRefusedError: The file conflicts with the ledger; nothing was written.
            StoreError: The store failed.
        """
        return await pending_import(self._store, self._imports, checked)

    async def write_import(self, pending: PendingImport, step: Progress | None = None) -> int:
        """Import what the ledger lacks of a file (see :meth:`pending_import`), whole sessions.

        Returns:
            How many events were written (0 when the ledger held them all already).

        Imported thoughts come without loop marks: the marks take them in after, in the
        background (every read folds what they lack meanwhile).

        Raises:
            ImportRefusedError: Writing stopped midway (whole sessions were written).
            StoreError: The store failed.
        """
        written = await write_import(self._imports, self._stripping, pending, step or NoProgress())
        if written and self._after_import is not None:
            await self._after_import()
        return written


__all__ = [
    "CheckedFile",
    "ImportRefusedError",
    "NoProgress",
    "PendingImport",
    "Progress",
    "Transfer",
    "check_file",
]
