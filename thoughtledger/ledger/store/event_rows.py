"""Pages of the log's stored rows, undecoded, hashes and ids included (a part of the contract).

:meth:`EventRowReads.read_all_event_rows` is
:meth:`~thoughtledger.ledger.store.base.EventStore.read_all` without decoding a single payload: a
fold that needs an event's hashes and id but only a few of its fields (an OpenTelemetry export
derives every span id from the hashes) reads these instead, and parses what it needs itself. Every
backend has it: this default is built on ``read_all``, and the SQL backends read the columns
straight from their tables.
"""

from abc import ABC, abstractmethod

from thoughtledger.ledger.envelope import EventRow, RecordedEvent


class EventRowReads(ABC):
    """The undecoded read of the log (a mixin of :class:`~ledger.store.base.EventStore`)."""

    @abstractmethod
    async def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """See :meth:`thoughtledger.ledger.store.base.EventStore.read_all`."""

    async def read_all_event_rows(
        self, *, after_position: int = 0, limit: int = 1000
    ) -> list[EventRow]:
        """Like :meth:`read_all`, but each event's stored columns, undecoded, time as text.

        The same events, in the same position order, with the same guarantee: a reader that
        pages with the last position it saw never skips an event that commits later.

        Raises:
            InvalidInputError: A negative position or a limit below 1.
            EventDecodingError: A stored event cannot be decoded (only where a backend reads
                through :meth:`read_all`, as this default does; the SQL backends do not decode).
            StoreError: The backend failed.
        """
        events = await self.read_all(after_position=after_position, limit=limit)
        return [EventRow.of(record) for record in events]


__all__ = ["EventRowReads"]
