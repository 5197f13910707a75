"""The PostgreSQL search index follows the log: thoughts are indexed in batches after appends.

Why. Until schema step 13 a statement trigger indexed each append's thoughts in the append's own
transaction: its PL/pgSQL call, the ``INSERT ... SELECT`` over the transition table and the GIN
index's insert cost about 7% of a one-event append. Indexed in batches, the same thoughts cost one
statement per batch, off the append's path.

How. Step 13 dropped the trigger and added ``tl_search_through``: the position up to which every
thought of the log is indexed. The store brings the index up to the log's end in a transaction of
its own, on one of its writer connections:

* at once (in the background) when :data:`INDEX_LAG` events of its appends wait;
* :data:`INDEX_DELAY` seconds after its appends pause;
* after every import, soon after a writable opening, and when it closes.

Positions are not dense and commit out of order (see
:mod:`thoughtledger.ledger.store.postgres.positions`), so a catch-up goes only as far as the
oldest transaction still in flight: a position below it can no longer appear. Processes sharing a
ledger take turns through a row lock on ``tl_search_through`` (a catch-up that finds it taken
leaves the work to the one holding it), which a redaction takes too: a catch-up never indexes a
text a redaction is removing. An import indexes its own thoughts in its transaction.

A search reads the thoughts after ``tl_search_through`` that the index does not hold from the log
and matches them itself (:mod:`thoughtledger.ledger.store.sql_search`), so a thought is found from
the moment its append answers, in any process, after a crash that left thoughts waiting, and by
a reader of a hot standby.
"""

# ruff: noqa: S608  # every piece joined below is a constant of ours: no input reaches it

import asyncio
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.store.postgres.positions import POSITION_SHIFT
from thoughtledger.ledger.store.search_text import pg_rows

INDEX_LAG = 256
"""Events appended (by this store) that start a catch-up at once."""
INDEX_DELAY = 0.05
"""Seconds after the last append before the store indexes what waits."""
INDEX_CHUNK = 5_000
"""The most events one catch-up transaction covers."""

LOCK = "SELECT position FROM tl_search_through WHERE id = 1 FOR UPDATE"
"""Take the index's turn (a redaction waits for a catch-up under way, and the reverse)."""
_TRY_LOCK = LOCK + " SKIP LOCKED"
_BEHIND = (
    "SELECT EXISTS (SELECT 1 FROM tl_events WHERE position > "
    "(SELECT position FROM tl_search_through WHERE id = 1))"
)
_HORIZON = f"(pg_snapshot_xmin(pg_current_snapshot())::text::bigint << {POSITION_SHIFT})"
_CHUNK = (
    "SELECT max(position), count(*) FROM (SELECT position FROM tl_events WHERE position > "
    f"(SELECT position FROM tl_search_through WHERE id = 1) AND position < {_HORIZON} "
    "ORDER BY position LIMIT $1) AS chunk"
)
_FILL = (
    pg_rows(
        "tl_events",
        "position > $1 AND position <= $2 AND NOT EXISTS "
        "(SELECT 1 FROM tl_search s WHERE s.position = tl_events.position) AND ",
    )
    + " ON CONFLICT DO NOTHING"
)  # an import's thoughts are indexed already (by its own transaction): not parsed again
_MOVE = "UPDATE tl_search_through SET position = $1 WHERE id = 1"
IMPORTED = pg_rows("tl_events", "position > :low AND position < :high AND ")
"""Index the thoughts of one import, in its transaction: positions ``:low`` (its transaction id,
shifted) to ``:high`` (excluded; bound parameters, for SQLAlchemy)."""

Writing = Callable[[], AbstractAsyncContextManager[Any]]
"""Lends a held writer connection's asyncpg driver (raises ``StoreError`` once closed)."""


async def index_waiting(driver: Any, *, limit: int = INDEX_CHUNK) -> bool:
    """Index up to ``limit`` waiting events in one transaction on ``driver``.

    Returns:
        Whether more events may wait (the chunk was full).

    Raises:
        asyncpg.PostgresError: The database failed (nothing was indexed).
        OSError: The connection failed.
    """
    if not await driver.fetchval(_BEHIND):
        return False
    async with driver.transaction():
        through = await driver.fetchval(_TRY_LOCK)
        if through is None:  # another catch-up (or a redaction) holds the turn
            return False
        high, count = await driver.fetchrow(_CHUNK, limit)
        if high is None:
            return False
        await driver.execute(_FILL, through, high)
        await driver.execute(_MOVE, high)
    return bool(count >= limit)


class SearchFollower:
    """Keeps a writable PostgreSQL store's search index up to the log's end (a part of the store).

    Args:
        writing: Lends a writer connection's driver.
        where: How to name the database in log lines.
    """

    def __init__(self, writing: Writing, where: str) -> None:
        self._writing = writing
        self._where = where
        self._waiting = 0
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    def appended(self, count: int) -> None:
        """Count an append's (or an import's) events, and plan the catch-up they call for."""
        self._waiting += count
        self._last = time.monotonic()
        if self._closing or self._task is not None:
            return  # the running catch-up plans the next when it ends
        if self._waiting >= INDEX_LAG:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._start()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(INDEX_DELAY, self._due)

    def catch_up_soon(self) -> None:
        """Plan a catch-up (an opening: another writer may have stopped before its thoughts)."""
        self._waiting = max(self._waiting, 1)
        if self._timer is None and self._task is None and not self._closing:
            self._timer = asyncio.get_running_loop().call_later(INDEX_DELAY, self._due)

    def _due(self) -> None:
        self._timer = None
        left = self._last + INDEX_DELAY - time.monotonic()
        if left > 0 and self._waiting < INDEX_LAG:  # appends went on: wait for their pause
            self._timer = asyncio.get_running_loop().call_later(left, self._due)
            return
        self._start()

    def _start(self) -> None:
        if self._task is None and not self._closing:
            self._task = asyncio.get_running_loop().create_task(self.catch_up())

    async def catch_up(self) -> None:
        """Index everything that waits, a chunk per transaction.

        A failure leaves the index behind, which every search makes up for by reading the log
        after it; it is logged, never raised (nothing waits on this but the close).
        """
        import asyncpg

        try:
            self._waiting = 0
            more = True
            while more:
                async with self._writing() as driver:
                    more = await index_waiting(driver)
        except StoreError as exc:
            _log("search_index_behind", where=self._where, error=str(exc))
        except (asyncpg.PostgresError, OSError) as exc:  # the driver's, logged right here
            _log("search_index_behind", where=self._where, error=str(exc))
        finally:
            self._task = None
        if self._waiting and not self._closing:  # appends that came meanwhile
            self.appended(0)

    async def close(self) -> None:
        """Index what this store's appends left waiting before it closes."""
        self._closing = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None:
            await self._task
        if self._waiting:
            await self.catch_up()


def _log(event: str, **facts: object) -> None:
    """Log through structlog, imported on first use (a server must not pay for it at start)."""
    import structlog

    structlog.get_logger("thoughtledger.ledger.store.postgres").warning(event, **facts)


__all__ = ["IMPORTED", "INDEX_CHUNK", "INDEX_DELAY", "INDEX_LAG", "LOCK", "SearchFollower"]
