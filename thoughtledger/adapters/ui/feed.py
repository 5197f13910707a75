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

from thoughtledger.adapters.ui.payload import event_json, json_bytes, mark_repeat
from thoughtledger.api import Ledger, LedgerError, SessionNotFoundError
from thoughtledger.projections.loops import LoopFinder

HEARTBEAT_SECONDS = 15.0

Allowed = Callable[[], Awaitable[bool]]
"""Whether the stream's reader may still read the session (checked every few seconds)."""


async def _held_loops(ledger: Ledger, session_id: str, after: int) -> LoopFinder:
    """The loop fold over the events the page holds (up to ``after``), to mark what follows.

    Raises:
        LedgerError: The ledger failed.
    """
    loops = LoopFinder()
    try:
        held = await ledger.events(session_id)
    except SessionNotFoundError:  # followed before its first event: nothing held yet
        return loops
    for record in held:
        if record.position <= after:
            mark_repeat(loops, event_json(record))
    return loops


async def feed(
    ledger: Ledger,
    session_id: str,
    after: int,
    *,
    allowed: Allowed | None = None,
    recheck: float = 2.0,
) -> AsyncIterator[bytes]:
    """Server-sent events: each new event as ``data: {json}``, a comment now and then.

    Args:
        ledger: The ledger.
        session_id: The session followed.
        after: The last position the page holds.
        allowed: Checked every ``recheck`` seconds; once false, the stream ends (``None``: never
            checked).
        recheck: Seconds between checks.
    """
    events = ledger.subscribe(after=after, session_id=session_id).__aiter__()
    waiting: asyncio.Task[Any] | None = None
    clock = time.monotonic
    checked = beat = clock()
    try:
        yield b": following\n\n"
        loops = await _held_loops(ledger, session_id, after)
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
            done, _ = await asyncio.wait({waiting}, timeout=max(wait, 0.0))
            if not done:
                if clock() - beat >= HEARTBEAT_SECONDS:
                    beat = clock()
                    yield b": still here\n\n"  # keeps proxies and the browser from giving up
                continue
            record = waiting.result()
            waiting = None
            item = event_json(record)
            mark_repeat(loops, item)
            yield b"data: " + json_bytes(item) + b"\n\n"
    except StopAsyncIteration:
        return
    except LedgerError as exc:
        yield b"event: failure\ndata: " + orjson.dumps({"error": str(exc)}) + b"\n\n"
    finally:
        if waiting is not None:
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, LedgerError):
                await waiting
        close = getattr(events, "aclose", None)
        if close is not None:  # releases what the subscription holds (a listening connection)
            await close()


__all__ = ["HEARTBEAT_SECONDS", "Allowed", "feed"]
