"""Sessions by the principal that started them: a store capability (``store.owners``).

A session's owner is a fact of its first event (``session.started``'s ``owner``), written once.
The core log lists every session's head newest first
(:meth:`~thoughtledger.ledger.store.base.EventStore.recent_heads`); listing only one owner's is
this capability's, so the log carries no parameter of the access rules. The SQL backends answer
from the index on the owner of each session's first event (``tl_events_owner``), never by a scan of
every head; the in-memory store filters the sessions it holds.
"""

from abc import abstractmethod
from datetime import datetime
from typing import Protocol, runtime_checkable

from thoughtledger.ledger.store.heads import StreamHead


@runtime_checkable
class Owners(Protocol):
    """The sessions one principal started, newest first (a store capability)."""

    @abstractmethod
    async def owned_heads(
        self,
        owner: str,
        *,
        before: tuple[datetime, str] | None = None,
        limit: int = 100,
    ) -> list[StreamHead]:
        """Return the heads of the sessions ``owner`` started, newest first, paging before a key.

        The order and paging of :meth:`~thoughtledger.ledger.store.base.EventStore.recent_heads`
        (by start time, then id), over the sessions whose ``session.started`` names ``owner``.

        Args:
            owner: The principal (``session.started``'s ``owner``).
            before: The ``(started_at, session_id)`` of the last head of the previous page.
            limit: The most heads to return.

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The backend failed.
        """


__all__ = ["Owners"]
