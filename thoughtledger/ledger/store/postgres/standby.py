"""Reads on a hot standby: which reads go there, and how a store still reads its own writes.

A store opened with a ``read_url`` (a hot standby of its primary, streaming its WAL) sends its
reads of the log, the sessions, statistics, search and the Merkle tree there (and its
subscriptions follow it: :mod:`thoughtledger.ledger.store.postgres.replay`), and everything that
writes to the primary: appends, imports, redactions, the tree's extensions, and the reads an
append makes for itself (the session's head, an append's own events after a lost answer).

A standby serves what it has replayed, so a read there may miss the primary's last commits (by
the replication lag: usually milliseconds, longer under load or while the standby catches up).
This store's own writes are never missed: after any write (committed or refused as a conflict,
which means the primary holds something newer) the next read first asks the primary how far its
WAL holds every acknowledged commit (:data:`WAL_COMMITTED`), then waits on its standby connection
until ``pg_last_wal_replay_lsn()`` reaches it. The wait is bounded
(:data:`REPLAY_WAIT`); past it the read goes to the primary instead, as do the reads after it
(each looking once, without waiting) until the standby has caught up or the store writes again.
Once the standby is seen at a position, reads up to it go straight there, so a run of reads
after one write waits at most once.

Asking for the position at the first read after a write (rather than after each commit) keeps an
append at one round trip; the position asked may be later than the write's own, which can only
lengthen the wait, never shorten it below the write.
"""

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

REPLAY_WAIT = 1.0
"""Longest a read waits for the standby to replay this store's writes before using the primary."""

_FIRST_PAUSE = 0.001
"""First pause between looks at the standby's replay position (doubles)."""
_LAST_PAUSE = 0.02
"""Longest pause between looks at the standby's replay position."""

WAL_COMMITTED = sa.text(
    "SELECT (CASE current_setting('synchronous_commit') WHEN 'off' "
    "THEN pg_current_wal_insert_lsn() ELSE pg_current_wal_flush_lsn() END "
    "- '0/0'::pg_lsn)::bigint"
)
"""A WAL position on the primary past every commit it has acknowledged, as a number.

A commit is acknowledged once its record is flushed, so the flush position is past it; the
insert position would do too, but it also covers records nobody waits to flush (the NOTIFY sent
after each append commits asynchronously), which reach a standby only when the WAL writer next
wakes (``wal_writer_delay``, 200 ms by default). Where commits are acknowledged before they are
flushed (``synchronous_commit=off``), only the insert position is surely past them.
"""

REPLAYED = sa.text("SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint")
"""How far the standby has replayed (NULL on a server that is not in recovery)."""


_FOR_A_WRITE: ContextVar[bool] = ContextVar("_FOR_A_WRITE", default=False)


@contextmanager
def reading_for_a_write() -> Iterator[None]:
    """Within the block (in this task), the store's reads go to the primary."""
    token = _FOR_A_WRITE.set(True)
    try:
        yield
    finally:
        _FOR_A_WRITE.reset(token)


def for_a_write() -> bool:
    """Whether a read now is one a write makes for itself (see :func:`reading_for_a_write`)."""
    return _FOR_A_WRITE.get()


class Standby:
    """A store's hot standby (a part): its engine, and what its reads must wait for.

    Args:
        engine: Connections to the standby (every transaction read-only).
        where: How to name the standby in messages (password masked).
        primary: Runs a read on the primary (asked :data:`WAL_COMMITTED`).
        wait: Seconds a read waits for the standby to replay this store's writes.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        where: str,
        primary: Callable[[sa.Executable], Awaitable[Sequence[sa.Row[Any]]]],
        *,
        wait: float = REPLAY_WAIT,
    ) -> None:
        self.engine = engine
        self.where = where
        self._primary = primary
        self._wait = wait
        self._writes = 0  # writes attempted through the store
        self._covered = 0  # of those, how many ``_target`` is known to cover
        self._target = 0  # the WAL position the next read must see replayed
        self._seen = 0  # the furthest replay position seen on the standby
        self._given_up = 0  # a target waited for in vain: later reads only look once

    def wrote(self) -> None:
        """Note a write just attempted (or refused: the primary has newer), for reads from now.

        A read from now on waits until the standby has replayed what the primary holds now.
        """
        self._writes += 1

    async def caught_up(self, connection: AsyncConnection) -> bool:
        """Wait (bounded) until the standby behind ``connection`` has replayed this store's writes.

        Returns:
            Whether it has: then a read on ``connection`` sees them; otherwise read the primary.

        Raises:
            StoreError: The primary could not be asked its position.
            sqlalchemy.exc.DBAPIError: The standby failed (the store translates it).
            OSError: The standby cannot be reached.
        """
        if self._covered < self._writes:
            writes = self._writes
            target = int((await self._primary(WAL_COMMITTED))[0][0])
            self._target = max(self._target, target)
            self._covered = max(self._covered, writes)
        if self._target <= self._seen:
            return True
        caught_up = await self._wait_for_replay(connection)
        # The read that follows takes a snapshot of its own, whatever the isolation level.
        await connection.rollback()
        return caught_up

    async def _wait_for_replay(self, connection: AsyncConnection) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self._wait if self._target > self._given_up else 0)
        pause = _FIRST_PAUSE
        while True:
            replayed = (await connection.execute(REPLAYED)).scalar_one()
            if replayed is None:  # not in recovery (the primary itself, or promoted): it has all
                return True
            self._seen = max(self._seen, replayed)
            if self._target <= self._seen:
                return True
            left = deadline - loop.time()
            if left <= 0:
                self._given_up = self._target
                return False
            await asyncio.sleep(min(pause, left))  # the WAL receiver has no event to await
            pause = min(pause * 2, _LAST_PAUSE)


__all__ = [
    "REPLAYED",
    "REPLAY_WAIT",
    "WAL_COMMITTED",
    "Standby",
    "for_a_write",
    "reading_for_a_write",
]
