"""Waking PostgreSQL subscriptions: LISTEN/NOTIFY as a hint, reads as the truth.

After an append or import commits, the store announces it with ``NOTIFY thoughtledger,
'<schema>'`` to every process listening on the database. Not inside the append's transaction:
PostgreSQL serialises the commits of notifying transactions on one lock held through the commit's
flush to disk, which cost concurrent appends five sixths of their throughput when measured
(``tools/bench append``). A :class:`Notifier` instead sends one notification at a time from a
connection of its own, after the commit, with ``synchronous_commit=off`` (a notification needs no
durability): appends that commit while one is on its way are covered by the next, so a store
sends at most one per round trip however fast it appends. A store holds one listening
connection while it has subscriptions, shared by all of them, and drops it when the last ends.

A notification only wakes subscriptions to read again, so a lost one (the listening connection
was cut, the server restarted) delays an event and never loses it: while the connection is down
subscriptions re-read every ``RETRY_SECONDS`` and try to listen again, and with it up they still
re-read every poll interval. Positions are gap-safe only below the oldest transaction in flight
(see :mod:`thoughtledger.ledger.store.postgres.store`): when the log holds committed events a read
could not return yet, a subscription re-reads soon, backing off, instead of waiting for a
notification that the blocking transaction (which may write nothing) would never send.
"""

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from thoughtledger.ledger.errors import StoreError, StoreUnavailableError
from thoughtledger.ledger.store.subscribe import Signal

CHANNEL = "thoughtledger"
"""The notification channel; the payload names the schema whose log grew."""

NOTIFY = "SELECT pg_notify('thoughtledger', current_schema())"
"""The statement that announces a commit (a literal: no SQL is assembled by formatting)."""
assert f"pg_notify('{CHANNEL}'," in NOTIFY  # noqa: S101  # announced where subscribers listen

POLL_INTERVAL = 1.0
"""Seconds between a subscription's safety re-reads while notifications flow, unless told."""

RETRY_SECONDS = 0.25
"""Seconds between re-reads (and attempts to listen again) while the listening link is down."""

CLOSE_SECONDS = 2.0
"""Longest a closing store waits to announce its last commits."""

_FIRST_HELD_BACK = 0.002
"""First wait when committed events are held back behind an older transaction (doubles)."""
_LAST_HELD_BACK = 0.5
"""Longest wait between re-reads while committed events are held back."""


Connect = Callable[[], Awaitable[AsyncConnection]]


class Listener:
    """One listening connection, shared by a store's subscriptions, raising ``signal`` on news.

    Args:
        connect: Opens a connection with the store's settings (its search path above all).
        signal: Raised on every notification for this schema, and whenever the link is lost or
            restored (subscriptions then re-read).
    """

    def __init__(self, connect: Connect, signal: Signal) -> None:
        self._connect = connect
        self._signal = signal
        self._users = 0
        self._lock = asyncio.Lock()
        self._held: AsyncConnection | None = None
        self._driver: Any = None
        self._schema: str | None = None
        self._recovering: asyncio.Task[None] | None = None

    @property
    def up(self) -> bool:
        """Whether notifications are being received."""
        return self._held is not None

    @property
    def users(self) -> int:
        """How many subscriptions share the listener."""
        return self._users

    async def acquire(self) -> None:
        """Count one more subscription, listening if nobody was (an outage is not fatal)."""
        async with self._lock:
            self._users += 1
            try:
                if self._held is None:
                    await self._start()
            except BaseException:  # cancelled while connecting: this subscription never began
                self._users -= 1
                raise

    async def release(self) -> None:
        """Count one subscription less, closing the connection after the last one."""
        async with self._lock:
            self._users -= 1
            if self._users == 0:
                await self._stop()

    async def close(self) -> None:
        """Stop listening whoever still subscribes (the store is closing)."""
        if self._recovering is not None:
            self._recovering.cancel()
        async with self._lock:
            await self._stop()

    async def restore(self) -> None:
        """Listen again after the link was lost, if some subscription still wants it."""
        async with self._lock:
            if self._held is None and self._users:
                await self._start()

    async def _start(self) -> None:
        try:
            connection = await self._connect()
        except (StoreError, OSError) as exc:
            _log("warning", "listen_failed", error=str(exc))
            return
        try:
            driver: Any = (await connection.get_raw_connection()).driver_connection
            self._schema = await driver.fetchval("SELECT current_schema()")
            driver.add_termination_listener(self._lost)
            await driver.add_listener(CHANNEL, self._heard)
        except BaseException as exc:  # the driver's errors on a link half gone, or a cancel
            await asyncio.shield(_discard(connection))
            if not isinstance(exc, Exception):
                raise
            _log("warning", "listen_failed", error=str(exc))
            return
        self._held, self._driver = connection, driver
        # Commits made while nobody listened went unannounced: subscriptions read once more.
        self._signal.notify()

    async def _stop(self) -> None:
        held, driver = self._held, self._driver
        self._held = self._driver = None
        if held is None:
            return
        with contextlib.suppress(Exception):  # the link may already be gone
            driver.remove_termination_listener(self._lost)
            await driver.remove_listener(CHANNEL, self._heard)
        # Closed for good, not pooled: a pooled connection would go on listening.
        await _discard(held)

    def _heard(self, _connection: object, _pid: int, _channel: str, payload: str) -> None:
        if payload == self._schema:
            self._signal.notify()

    def _lost(self, connection: object) -> None:
        if connection is not self._driver:
            return
        _log("info", "listen_lost")
        held, self._held, self._driver = self._held, None, None
        if self._recovering is None or self._recovering.done():
            self._recovering = asyncio.get_running_loop().create_task(self._recover(held))
        self._signal.notify()

    async def _recover(self, lost: AsyncConnection | None) -> None:
        """Listen again, with growing pauses, while subscriptions want it (the server restarts)."""
        if lost is not None:
            await _discard(lost)
        pause = RETRY_SECONDS
        while True:
            await self.restore()
            if self._held is not None or not self._users:
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, 5.0)


async def _discard(connection: AsyncConnection) -> None:
    with contextlib.suppress(Exception):  # closing is best effort on a broken link
        await connection.invalidate()
        await connection.close()


class Notifier:
    """Announces a store's commits, one notification at a time (see the module docstring).

    Args:
        connect: Opens a connection with the store's settings (its search path above all).
    """

    def __init__(self, connect: Connect) -> None:
        self._connect = connect
        self._held: AsyncConnection | None = None
        self._driver: Any = None
        self._wanted = False
        self._sending: asyncio.Task[None] | None = None

    def committed(self) -> None:
        """Announce a commit: now, or right after the notification already on its way."""
        self._wanted = True
        if self._sending is None or self._sending.done():
            self._sending = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        while self._wanted:
            self._wanted = False
            try:
                if self._driver is None:
                    self._held = await self._connect()
                    self._driver = (await self._held.get_raw_connection()).driver_connection
                    await self._driver.execute("SET synchronous_commit = off")
                await self._driver.execute(NOTIFY)
            except (
                Exception
            ) as exc:  # ours or the driver's: subscribers re-read within their interval
                await self._drop(exc)

    async def _drop(self, exc: BaseException) -> None:
        _log("warning", "notify_failed", error=str(exc))
        held, self._held, self._driver = self._held, None, None
        if held is not None:
            await _discard(held)

    async def close(self) -> None:
        """Send what is pending (waiting at most ``CLOSE_SECONDS``), then close the connection.

        A process that appends and exits (one CLI command) must still wake subscribers at once.
        """
        if self._sending is not None and not self._sending.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._sending), CLOSE_SECONDS)
            self._sending.cancel()
        held, self._held, self._driver = self._held, None, None
        if held is not None:
            with contextlib.suppress(Exception):  # closing is best effort on a broken link
                await held.close()


class Hearing(Protocol):
    """What wakes a store's subscriptions: its :class:`Listener`, or on a standby a follower.

    (The follower: :class:`~thoughtledger.ledger.store.postgres.replay.ReplayFollower`.)
    """

    @property
    def up(self) -> bool:
        """Whether news is being received."""

    async def acquire(self) -> None:
        """Count one more subscription."""

    async def release(self) -> None:
        """Count one subscription less."""

    async def restore(self) -> None:
        """Hear again after the link was lost."""


class PostgresWatch:
    """A subscription's watch: the shared :class:`Listener`, a safety re-read, held-back polling.

    Args:
        listener: The store's listener (or what stands for it: see :class:`Hearing`).
        signal: The signal the listener raises.
        held_back: Whether the log holds events after a position that reads cannot return yet.
        interval: Seconds between safety re-reads while the listener is up.
    """

    def __init__(
        self,
        listener: Hearing,
        signal: Signal,
        held_back: Callable[[int], Awaitable[bool]],
        interval: float,
    ) -> None:
        self._listener = listener
        self._signal = signal
        self._held_back = held_back
        self._interval = interval
        self._delay = _FIRST_HELD_BACK

    async def _held_back_or_unknown(self, cursor: int) -> bool:
        try:
            return await self._held_back(cursor)
        except StoreUnavailableError:
            return True  # the next read finds out, patiently (see ledger.store.subscribe)

    async def __aenter__(self) -> "PostgresWatch":
        await self._listener.acquire()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        # Shielded: a second cancel must not leave the listener counting a gone subscription.
        await asyncio.shield(self._listener.release())

    def mark(self) -> int:
        """See :meth:`thoughtledger.ledger.store.subscribe.Watch.mark`."""
        return self._signal.generation

    async def wait(self, seen: int, cursor: int | None) -> None:
        """See :meth:`thoughtledger.ledger.store.subscribe.Watch.wait`.

        Raises:
            StoreError: The server failed while checking for held-back events.
        """
        if not self._listener.up:
            await self._listener.restore()
        if cursor is not None and await self._held_back_or_unknown(cursor):
            within = self._delay
            self._delay = min(self._delay * 2, self._interval, _LAST_HELD_BACK)
        else:
            self._delay = _FIRST_HELD_BACK
            within = self._interval if self._listener.up else min(self._interval, RETRY_SECONDS)
        await self._signal.wait(seen, within)


def _log(level: str, event: str, **facts: object) -> None:
    """Log through structlog, imported on first use (a server must not pay for it at start)."""
    import structlog

    getattr(structlog.get_logger("thoughtledger.ledger.store.postgres"), level)(event, **facts)


__all__ = [
    "CHANNEL",
    "NOTIFY",
    "POLL_INTERVAL",
    "RETRY_SECONDS",
    "Hearing",
    "Listener",
    "Notifier",
    "PostgresWatch",
]
