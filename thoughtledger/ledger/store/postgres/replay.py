"""Waking subscriptions on a hot standby: following its replay position, since NOTIFY stays home.

A notification is not written to the WAL, so a standby never delivers one, and LISTEN is refused
there. A store reading from a standby (see :mod:`thoughtledger.ledger.store.postgres.standby`)
therefore wakes its subscriptions from one task per store, running while it has subscriptions: it
asks the standby for ``pg_last_wal_replay_lsn()`` every :data:`REPLAY_POLL` seconds, on one
connection outside any transaction (an open snapshot on a standby would hold up replay), and
raises the signal whenever the position moved. A subscription then reads again, as after a
notification; as there, a wake-up is only a hint, and the safety re-reads and the held-back
polling of :class:`~thoughtledger.ledger.store.postgres.listen.PostgresWatch` still apply.

An event therefore reaches a standby's subscriber after the replication lag plus at most one
poll interval; ``tools/bench standby`` measures it beside the primary's LISTEN/NOTIFY.
"""

import asyncio
import contextlib

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from thoughtledger.ledger.store.postgres.listen import RETRY_SECONDS
from thoughtledger.ledger.store.postgres.standby import REPLAYED
from thoughtledger.ledger.store.subscribe import Signal

REPLAY_POLL = 0.005
"""Seconds between looks at the standby's replay position while some subscription follows it."""


class ReplayFollower:
    """One poller of a standby's replay position, shared by a store's subscriptions (a part).

    Offers what :class:`~thoughtledger.ledger.store.postgres.listen.PostgresWatch` uses of a
    :class:`~thoughtledger.ledger.store.postgres.listen.Listener`.

    Args:
        engine: Connections to the standby.
        signal: Raised whenever the replay position moves, and when the link is lost.
        interval: Seconds between looks.
    """

    def __init__(self, engine: AsyncEngine, signal: Signal, interval: float = REPLAY_POLL) -> None:
        self._engine = engine
        self._signal = signal
        self._interval = interval
        self._users = 0
        self._task: asyncio.Task[None] | None = None
        self._up = False

    @property
    def up(self) -> bool:
        """Whether the replay position is being followed (``False`` while the link is down)."""
        return self._up

    async def acquire(self) -> None:
        """Count one more subscription, following replay if nobody was."""
        self._users += 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._follow())

    async def release(self) -> None:
        """Count one subscription less, stopping after the last one."""
        self._users -= 1
        if self._users == 0:
            await self.close()

    async def restore(self) -> None:
        """Nothing to do: the follower retries by itself while the link is down."""

    async def close(self) -> None:
        """Stop following, whoever still subscribes (the store is closing)."""
        task, self._task = self._task, None
        self._up = False
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _follow(self) -> None:
        seen: int | None = None
        while True:
            try:
                async with self._engine.connect() as connection:
                    polling = await connection.execution_options(isolation_level="AUTOCOMMIT")
                    while True:
                        replayed = (await polling.execute(REPLAYED)).scalar_one()
                        if not self._up or replayed != seen:
                            self._up, seen = True, replayed
                            self._signal.notify()
                        await asyncio.sleep(self._interval)  # a standby has nothing to await
            except (sa.exc.DBAPIError, OSError) as exc:
                _log("warning", "replay_follow_failed", error=str(exc))
            self._up = False
            self._signal.notify()  # subscriptions re-read, and retry on their own schedule
            await asyncio.sleep(RETRY_SECONDS)


def _log(level: str, event: str, **facts: object) -> None:
    """Log through structlog, imported on first use (a server must not pay for it at start)."""
    import structlog

    getattr(structlog.get_logger("thoughtledger.ledger.store.postgres"), level)(event, **facts)


__all__ = ["REPLAY_POLL", "ReplayFollower"]
