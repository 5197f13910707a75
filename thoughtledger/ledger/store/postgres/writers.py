"""The connections a PostgreSQL store holds open for its writes, lent to one write at a time.

Writers hold their connections: a pool checkout per append costs more than the append. A write
borrows a connection's driver (asyncpg's own, so its statement skips SQLAlchemy), at most as many
at once as the store was opened with (more writes wait for one). A connection whose write failed
is not lent again, as it may be broken; after a lost connection the store drops the idle ones too
(:meth:`HeldWriters.drop_idle`), since the server likely restarted.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine


class HeldWriters:
    """The writer connections of a PostgreSQL store (a part), lent to one write at a time.

    Args:
        engine: The store's engine, which opens them.
        count: How many may be lent at once (more writes wait).
        closed: Whether the store is closed (then a returned connection is not kept).
    """

    def __init__(self, engine: AsyncEngine, count: int, closed: Callable[[], bool]) -> None:
        self._engine = engine
        self._closed = closed
        self._idle: list[tuple[AsyncConnection, Any]] = []
        self._slots = asyncio.Semaphore(count)
        self._all: set[AsyncConnection] = set()

    @asynccontextmanager
    async def lend(self) -> AsyncIterator[Any]:
        """Lend a held connection's driver, opening a connection when none is idle.

        Raises:
            Exception: The driver's errors in opening a connection, for the caller to translate.
        """
        async with self._slots:
            if self._idle:
                connection, driver = self._idle.pop()
            else:
                connection = await self._engine.connect()
                self._all.add(connection)
                driver = (await connection.get_raw_connection()).driver_connection
            healthy = False
            try:
                yield driver
                healthy = True
            finally:
                if healthy and not self._closed():
                    self._idle.append((connection, driver))
                else:
                    self._all.discard(connection)
                    with contextlib.suppress(Exception):  # a broken connection may fail to close
                        await connection.invalidate()
                        await connection.close()

    async def drop_idle(self) -> None:
        """Invalidate and close the idle connections (one was lost: the others likely were)."""
        idle, self._idle = self._idle, []
        for connection, _driver in idle:
            self._all.discard(connection)
            with contextlib.suppress(Exception):  # a lost connection may fail to close
                await connection.invalidate()
                await connection.close()

    async def close(self) -> None:
        """Close every connection held, idle or lent."""
        for connection in list(self._all):
            with contextlib.suppress(Exception):  # closing is best effort on a broken link
                await connection.close()
        self._all.clear()
        self._idle.clear()


__all__ = ["HeldWriters"]
