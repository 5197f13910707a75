"""The session page's body, built a slice at a time, one build per principal at a time.

A long session's page costs this process seconds of work: each event read and decoded, turned
into what the page draws, and encoded. Done in one go on the event loop, that held every other
request of every principal for as long (a 49,000-event page stalled the app 1.2 s; a principal
asking for its own huge session again and again stalled it for good). So a page is built
:data:`PAGE_SLICE` events at a time, the event loop free between slices to answer anyone else;
each principal builds one page at a time (its other page requests wait their turn behind it,
never another principal's, and a chain walk takes the same turns); and a body once built is kept
by its session's head (a reload, or a second reader, costs a look-up).
"""

import asyncio
from collections import OrderedDict
from contextlib import AbstractAsyncContextManager

from thoughtledger.adapters.ui.payload import PayloadEvents, json_bytes
from thoughtledger.api import Ledger, StreamHead, Turns

PAGE_SLICE = 100
"""Events converted between two turns of the event loop (a few milliseconds of work)."""
PAYLOADS_HELD_BYTES = 64 * 2**20
"""The most bytes of built pages kept (the least recently sent go first)."""


class PageBuilds:
    """Session pages, built fairly and kept by head.

    Args:
        ledger: The ledger the pages show.
        budget: The most bytes of built pages kept.
    """

    def __init__(self, ledger: Ledger, *, budget: int = PAYLOADS_HELD_BYTES) -> None:
        self._ledger = ledger
        self._turns = Turns()
        self._kept = _Payloads(budget)

    def turn(self, principal: str | None) -> AbstractAsyncContextManager[None]:
        """One of ``principal``'s turns, for another whole-session read (a chain walk)."""
        return self._turns.of(principal)

    async def body(self, principal: str | None, head: StreamHead) -> bytes:
        """The page of the session ``head`` names, up to that head, as JSON bytes.

        The caller has checked that ``principal`` may read the session.

        Args:
            principal: Who asks (its builds take turns; ``None``: the app's one user).
            head: The session's head, as the caller read it.

        Raises:
            LedgerError: The ledger failed.
        """
        kept = self._kept.get(head)
        if kept is not None:
            return kept
        async with self._turns.of(principal):
            kept = self._kept.get(head)  # built meanwhile, by this principal's build before
            if kept is None:
                kept = await self._build(head)
                self._kept.keep(head, kept)
        return kept

    async def _build(self, head: StreamHead) -> bytes:
        session_id, version = head.session_id, head.version
        marks = await self._ledger.loops.marks(session_id, to_version=version)
        events = PayloadEvents(marks)
        parts: list[bytes] = []
        slices = self._ledger.transfer.export([session_id], slice_size=PAGE_SLICE)
        async for records in slices:
            # The head may have moved since the caller read it: the page is the head's.
            items = events.add(record for record in records if record.version <= version)
            if items:
                parts.append(json_bytes(items)[1:-1])
            await asyncio.sleep(0)  # the event loop answers others before the next slice
        return b'{"sessionId":' + json_bytes(session_id) + b',"events":[' + b",".join(parts) + b"]}"


class _Payloads:
    """The session pages last sent, by session and head.

    A session only grows, so a head (version and hash) names one page.
    """

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._held: OrderedDict[str, tuple[int, str, bytes]] = OrderedDict()
        self._bytes = 0

    def get(self, head: StreamHead) -> bytes | None:
        held = self._held.get(head.session_id)
        if held is None or held[:2] != (head.version, head.hash):
            return None
        self._held.move_to_end(head.session_id)
        return held[2]

    def keep(self, head: StreamHead, body: bytes) -> None:
        old = self._held.pop(head.session_id, None)
        if old is not None:
            self._bytes -= len(old[2])
        self._held[head.session_id] = (head.version, head.hash, body)
        self._bytes += len(body)
        while self._bytes > self._budget and len(self._held) > 1:
            _, (_, _, dropped) = self._held.popitem(last=False)
            self._bytes -= len(dropped)


__all__ = ["PAGE_SLICE", "PAYLOADS_HELD_BYTES", "PageBuilds"]
