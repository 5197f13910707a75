"""Following a session as it grows: its events after a position, then each new one.

The session page holds every event up to some position; this yields the ones after it, read
by any process sharing the ledger, until the client goes away.
"""

import asyncio
from collections.abc import AsyncIterator

from api.service import Ledger
from ledger.envelope import RecordedEvent

POLL_SECONDS = 0.2
"""How often a followed session's head is read for news (a fifth of the one-second promise)."""


async def follow(ledger: Ledger, session_id: str, *, after: int) -> AsyncIterator[RecordedEvent]:
    """Yield ``session_id``'s events after global position ``after``, then each new one.

    Raises:
        InvalidInputError: The id is malformed.
        StoreError: The store failed.
    """
    seen_version = 0
    while True:
        head = await ledger.head(session_id)
        if head is not None and head.version > seen_version:
            for record in await ledger.events(session_id):
                if record.version > seen_version and record.position > after:
                    yield record
            seen_version = head.version
        await asyncio.sleep(POLL_SECONDS)


__all__ = ["POLL_SECONDS", "follow"]
