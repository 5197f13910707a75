"""Catch-up subscriptions to the log: every event after a position, then each one as it commits.

A subscription is a loop over the store's own reads, so it inherits their guarantees: it pages
through :meth:`~thoughtledger.ledger.store.base.EventStore.read_all` with the last position it
delivered (a reader that does so never skips an event that commits later, on every backend), or,
following one session, through :meth:`~thoughtledger.ledger.store.base.EventStore.read_stream` by
version (a session's versions commit in order). There is no separate "live" channel whose events
could race the catch-up reads: catching up and following are the same read, so the switch has no gap
and no duplicate.

Between reads it waits on a :class:`Watch`, the backend's way of hearing that something may have
committed: an in-process signal that appends of this store raise, plus polling (SQLite) or
PostgreSQL's LISTEN/NOTIFY. A wake-up is only a hint; a missed one delays, never loses, an event,
because every watch also re-reads after a bounded time.
"""

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Protocol, TypeVar

from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError, StoreError, StoreUnavailableError

DEFAULT_PAGE = 500
"""Events read per catch-up page."""

OUTAGE_SECONDS = 30.0
"""How long a subscription keeps retrying reads while the database is unreachable (a server
restart) before it raises :class:`StoreUnavailableError`."""

_T = TypeVar("_T")


class Signal:
    """A counter of "something may have changed", with waiters that sleep until it moves.

    A waiter first notes :attr:`generation`, then reads, then waits for the generation it noted:
    a change raised between its read and its wait wakes it at once, so no wake-up is lost.
    """

    def __init__(self) -> None:
        self.generation = 0
        self._moved: asyncio.Event | None = None

    def notify(self) -> None:
        """Record a change and wake every waiter (safe to call from any code on the loop)."""
        self.generation += 1
        if self._moved is not None:
            self._moved.set()
            self._moved = None

    async def wait(self, seen: int, within: float | None) -> bool:
        """Wait until the generation moves past ``seen``, at most ``within`` seconds.

        Returns:
            Whether it moved (``False``: the time ran out).
        """
        if self.generation != seen:
            return True
        if self._moved is None:
            self._moved = asyncio.Event()
        moved = self._moved
        if within is None:
            await moved.wait()
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(moved.wait(), within)
        return self.generation != seen


class FollowedLog(Protocol):
    """What a subscription reads of a store: its public reads, and whether it is closed.

    (:class:`~thoughtledger.ledger.store.base.EventStore` is one; this module knows only these.)
    """

    @property
    def closed(self) -> bool:
        """Whether the store was closed (the subscription then ends)."""

    async def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """See :meth:`~thoughtledger.ledger.store.base.EventStore.read_all`."""

    async def read_stream(
        self,
        session_id: str,
        *,
        after_version: int = 0,
        to_version: int | None = None,
        limit: int | None = None,
    ) -> list[RecordedEvent]:
        """See :meth:`~thoughtledger.ledger.store.base.EventStore.read_stream`."""

    async def version_at(self, session_id: str, position: int) -> int:
        """See :meth:`~thoughtledger.ledger.store.base.EventStore.version_at`."""


class Watch(Protocol):
    """How a subscription learns that the log may have grown (one per subscription)."""

    def mark(self) -> int:
        """Return a token to pass to :meth:`wait` after the next read (taken before it)."""

    async def wait(self, seen: int, cursor: int | None) -> None:
        """Return once something may have committed after the read that followed :meth:`mark`.

        Args:
            seen: The token :meth:`mark` returned before that read.
            cursor: The last position read from the whole log; ``None`` when following one
                session (whose reads by version a later commit can never precede).

        Raises:
            StoreError: The backend failed in a way that retrying cannot mend.
        """


def check_subscription(after: int, page: int, poll_interval: float | None) -> None:
    """Validate the start, page size and polling interval (``None``: default) of a subscription.

    Raises:
        InvalidInputError: A negative or non-integer start, a page below 1, or an interval that
            is not a positive number of seconds.
    """
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise InvalidInputError("after must be an integer >= 0 (a position; 0 = the beginning)")
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise InvalidInputError("page must be an integer >= 1")
    if poll_interval is None:
        return
    if isinstance(poll_interval, bool) or not isinstance(poll_interval, int | float):
        raise InvalidInputError("poll_interval must be a number of seconds")
    if not 0 < poll_interval <= 3600:  # also refuses NaN
        raise InvalidInputError("poll_interval must be > 0 and at most 3600 seconds")


async def follow(
    store: FollowedLog,
    watch: contextlib.AbstractAsyncContextManager[Watch],
    *,
    after: int,
    session_id: str | None,
    page: int,
) -> AsyncIterator[RecordedEvent]:
    """Yield every event after position ``after`` (of ``session_id`` only, when given), forever.

    The watch is entered before the first read and left when the iteration ends (the consumer
    breaks out, the task is cancelled, the generator is closed, or the store is closed),
    releasing what it holds.

    Raises:
        EventDecodingError: A stored event cannot be decoded.
        StoreError: The backend failed.
    """
    try:
        async with watch as watching:
            records = (
                _follow_log(store, watching, after, page)
                if session_id is None
                else _follow_session(store, watching, after, session_id, page)
            )
            async with contextlib.aclosing(records):
                async for record in records:
                    yield record
    except StoreError:
        if store.closed:  # closed while a read was in flight: the end, not a failure
            return
        raise


async def _follow_log(
    store: FollowedLog, watching: Watch, after: int, page: int
) -> AsyncGenerator[RecordedEvent]:
    cursor = after
    while not store.closed:
        seen = watching.mark()
        records = await _patiently(partial(store.read_all, after_position=cursor, limit=page))
        for record in records:
            cursor = record.position
            yield record
        if len(records) < page:
            await watching.wait(seen, cursor)


async def _follow_session(
    store: FollowedLog, watching: Watch, after: int, session_id: str, page: int
) -> AsyncGenerator[RecordedEvent]:
    version = await _patiently(partial(store.version_at, session_id, after))
    while not store.closed:
        seen = watching.mark()
        records = await _patiently(
            partial(store.read_stream, session_id, after_version=version, to_version=version + page)
        )
        for record in records:
            version = record.version
            # The session's events after ``after`` by position: one that committed below it
            # after the version was looked up (PostgreSQL) belongs before the start.
            if record.position > after:
                yield record
        if len(records) < page:
            await watching.wait(seen, None)


async def _patiently(read: Callable[[], Awaitable[_T]]) -> _T:
    """Run ``read``, retrying with growing pauses while the database is unreachable.

    Raises:
        StoreUnavailableError: Still unreachable after :data:`OUTAGE_SECONDS`.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + OUTAGE_SECONDS
    pause = 0.1
    while True:
        try:
            return await read()
        except StoreUnavailableError as exc:
            if loop.time() + pause > deadline:
                raise
            _log("warning", "subscription_waits_for_store", error=str(exc), retry_in=pause)
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)


class SignalWatch:
    """A watch on an in-process :class:`Signal`, re-checking every ``interval`` seconds.

    With ``interval=None`` it sleeps until the signal moves: right for a store whose every
    writer is in this process (memory).
    """

    def __init__(self, signal: Signal, interval: float | None) -> None:
        self._signal = signal
        self._interval = interval

    async def __aenter__(self) -> "SignalWatch":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    def mark(self) -> int:
        """See :meth:`Watch.mark`."""
        return self._signal.generation

    async def wait(self, seen: int, cursor: int | None) -> None:
        """See :meth:`Watch.wait`."""
        await self._signal.wait(seen, self._interval)


class PollingWatch(SignalWatch):
    """A watch on a :class:`Signal` that also polls ``probe`` every ``interval`` seconds.

    ``probe`` is a cheap reading that changes whenever another process commits (SQLite's
    ``PRAGMA data_version``): the subscription reads again when it differs from its reading
    taken before the last read.
    """

    def __init__(self, signal: Signal, interval: float, probe: Callable[[], int]) -> None:
        super().__init__(signal, interval)
        self._probe = probe
        self._reading = 0

    def mark(self) -> int:
        """See :meth:`Watch.mark`."""
        self._reading = self._probe()
        return self._signal.generation

    async def wait(self, seen: int, cursor: int | None) -> None:
        """See :meth:`Watch.wait`."""
        while not await self._signal.wait(seen, self._interval):
            if self._probe() != self._reading:
                return


def _log(level: str, event: str, **facts: object) -> None:
    """Log through structlog, imported on first use (a server must not pay for it at start)."""
    import structlog

    getattr(structlog.get_logger("thoughtledger.ledger.store"), level)(event, **facts)


__all__ = [
    "DEFAULT_PAGE",
    "FollowedLog",
    "PollingWatch",
    "Signal",
    "SignalWatch",
    "Watch",
    "check_subscription",
    "follow",
]
