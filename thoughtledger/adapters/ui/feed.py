"""The session page's live feed: server-sent events, for as long as the reader may read.

Built on the ledger's catch-up subscription: the events after the one the page holds, then each
one as any process commits it, none missed and none twice. A comment every
:data:`HEARTBEAT_SECONDS` keeps proxies and the browser from giving up on a quiet session. Where
the app has authentication the reader is checked again every few seconds (its token verified
afresh), and a stream whose reader was signed out, or whose token was revoked, ends with a
``signed-out`` event.
"""

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from thoughtledger.adapters.common.shares import Held
from thoughtledger.adapters.ui.payload import JsonDict, event_json, json_bytes, mark_repeat
from thoughtledger.api import Ledger, LedgerError
from thoughtledger.ledger.envelope import RecordedEvent

HEARTBEAT_SECONDS = 15.0

Allowed = Callable[[], Awaitable[bool]]
"""Whether the stream's reader may still read the session (checked every few seconds)."""


NUMBERS_HELD = 4096
"""Thought numbers a stream keeps, newest first (a repeat names a recent thought)."""


class _Repeats:
    """Marks the repeats among a followed session's new events, as the ledger answers them.

    Only the events after the position the page holds are read: each new thought's mark is
    asked of the ledger's loop marks for its version alone, and the number of the thought it
    repeats, when that one came before the stream, read as one event. Opening a stream on a
    session of any length costs what its new events cost.
    """

    def __init__(self, ledger: Ledger, session_id: str) -> None:
        self._ledger = ledger
        self._session_id = session_id
        self.numbers: dict[int, Any] = {}
        """Recent thoughts' numbers by version (a repeat names the number of the one it repeats)."""

    async def mark(self, record: RecordedEvent, item: JsonDict) -> None:
        """Mark ``item`` (``record``'s) if it repeats an earlier thought.

        Raises:
            LedgerError: The ledger failed.
        """
        repeats: dict[int, int] = {}
        if "x" in item:
            loops = self._ledger.loops
            version = record.version
            marks = await loops.marks(
                self._session_id, after_version=version - 1, to_version=version
            )
            repeats = {m.version: m.repeats_version for m in marks if m.version == version}
            earlier = repeats.get(version)
            if earlier is not None and earlier not in self.numbers:
                number = await loops.thought_number(self._session_id, earlier)
                if number is not None:
                    self.numbers[earlier] = number
        mark_repeat(item, repeats, self.numbers)
        while len(self.numbers) > NUMBERS_HELD:
            del self.numbers[next(iter(self.numbers))]


async def feed(
    ledger: Ledger,
    session_id: str,
    after: int,
    *,
    allowed: Allowed | None = None,
    recheck: float = 2.0,
    ended: asyncio.Event | None = None,
) -> AsyncIterator[bytes]:
    """Server-sent events: each new event as ``data: {json}``, a comment now and then.

    Args:
        ledger: The ledger.
        session_id: The session followed.
        after: The last position the page holds.
        allowed: Checked every ``recheck`` seconds; once false, the stream ends (``None``: never
            checked).
        recheck: Seconds between checks.
        ended: Set when the stream's slot among its principal's live streams is taken back
            to make room: the stream then ends with a ``pushed-out`` event.
    """
    events = ledger.subscribe(after=after, session_id=session_id).__aiter__()
    waiting: asyncio.Task[Any] | None = None
    pushed: asyncio.Task[Any] | None = (
        asyncio.ensure_future(ended.wait()) if ended is not None else None
    )
    clock = time.monotonic
    checked = beat = clock()
    try:
        yield b": following\n\n"
        repeats = _Repeats(ledger, session_id)
        while True:
            if allowed is not None and clock() - checked >= recheck:
                if not await allowed():
                    message = {"error": "signed out: sign in again to follow this session"}
                    yield b"event: signed-out\ndata: " + orjson.dumps(message) + b"\n\n"
                    return
                checked = clock()
            if waiting is None:
                waiting = asyncio.ensure_future(events.__anext__())
            wait = HEARTBEAT_SECONDS - (clock() - beat)
            if allowed is not None:
                wait = min(wait, recheck - (clock() - checked))
            watched = {waiting} if pushed is None else {waiting, pushed}
            done, _ = await asyncio.wait(
                watched, timeout=max(wait, 0.0), return_when=asyncio.FIRST_COMPLETED
            )
            if pushed is not None and pushed in done:
                message = {"error": "pushed out: the server's live streams are full; reload later"}
                yield b"event: pushed-out\ndata: " + orjson.dumps(message) + b"\n\n"
                return
            if waiting not in done:
                if clock() - beat >= HEARTBEAT_SECONDS:
                    beat = clock()
                    yield b": still here\n\n"  # keeps proxies and the browser from giving up
                continue
            record = waiting.result()
            waiting = None
            item = event_json(record)
            await repeats.mark(record, item)
            yield b"data: " + json_bytes(item) + b"\n\n"
    except StopAsyncIteration:
        return
    except LedgerError as exc:
        yield b"event: failure\ndata: " + orjson.dumps({"error": str(exc)}) + b"\n\n"
    finally:
        if pushed is not None:
            pushed.cancel()
        if waiting is not None:
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, LedgerError):
                await waiting
        close = getattr(events, "aclose", None)
        if close is not None:  # releases what the subscription holds (a listening connection)
            await close()


class HeldStream(StreamingResponse):
    """An event stream that gives its slot among the live shares back when it ends.

    However it ends (the client left, the stream ended, or the body was never started), the
    slot is released: a generator never started would never run its own ``finally``.
    """

    def __init__(self, held: Held, content: AsyncIterator[bytes]) -> None:
        super().__init__(content, media_type="text/event-stream")
        self._held = held

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Stream the events; release the slot once done."""
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._held.release()


__all__ = ["HEARTBEAT_SECONDS", "Allowed", "HeldStream", "feed"]
