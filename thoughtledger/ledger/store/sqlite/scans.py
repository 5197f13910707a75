"""The SQLite backend's scans: statements written as SQL text, each run in a worker thread.

The statistics, a search and the loop counts are statements written as text with their values
bound (see :mod:`thoughtledger.ledger.store.sql_stats`). Each may read much of the log, so it
never runs inline on the event loop: it runs in a worker thread, on a reading connection taken from
a few kept for the purpose (each made as the engine's are: ``query_only``, waiting up to 5 s on a
database another process is recovering), so that two scans run at once (the statistics' two
statements do). A cancelled scan stops within a fraction of a millisecond of SQLite's work (a
progress handler asks between every 100,000 of its steps, which costs nothing measurable and,
unlike ``interrupt()``, cannot miss a statement that has not begun yet), and its connection is
kept again only once its thread is done with it. Nothing here imports SQLAlchemy: a reading
command runs its scans without it.
"""

import asyncio
import sqlite3
import threading
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from thoughtledger.ledger.errors import StoreError

KEPT = 4
"""Idle scanning connections kept for the next scans (more are closed once done)."""
_STEPS = 100_000
"""SQLite's steps between two looks at whether a scan was cancelled."""


class SqliteScans:
    """Scanning connections to one SQLite ledger, and the scans run on them (a part of the store).

    Args:
        uri: The ``file:`` URI the store's connections are made from (read-only ones when the
            store is read-only).
        path: The database file, for error messages.
    """

    def __init__(self, uri: str, path: Path) -> None:
        self._uri = uri
        self._path = path
        self._idle: list[sqlite3.Connection] = []
        self._closed = False

    async def fetch(self, statement: str, params: Mapping[str, object]) -> list[Any]:
        """Run ``statement`` with ``params`` (named ``:name`` in it) and return its rows.

        Raises:
            StoreError: The store is closed, or the read failed.
        """
        if self._closed:
            raise StoreError("the store is closed")
        connection = self._idle.pop() if self._idle else self._connect()
        cancelled = threading.Event()
        running = asyncio.get_running_loop().run_in_executor(
            None, self._rows, connection, statement, params, cancelled
        )
        # Kept again (or closed) when its thread is done with it, even if the caller is not.
        running.add_done_callback(partial(self._ended, connection))
        try:
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    def close(self) -> None:
        """Close the idle connections; one still scanning is closed when its scan ends."""
        self._closed = True
        while self._idle:
            self._idle.pop().close()

    def _connect(self) -> sqlite3.Connection:
        """Open a scanning connection that refuses writes.

        Raises:
            StoreError: It cannot be opened.
        """
        try:
            connection = sqlite3.connect(
                self._uri, uri=True, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"read from {self._path} failed: {exc}") from exc
        try:
            connection.execute("PRAGMA busy_timeout = 5000")
            connection.execute("PRAGMA query_only = 1")
        except sqlite3.Error as exc:
            connection.close()
            raise StoreError(f"read from {self._path} failed: {exc}") from exc
        return connection

    def _rows(
        self,
        connection: sqlite3.Connection,
        statement: str,
        params: Mapping[str, object],
        cancelled: threading.Event,
    ) -> list[Any]:
        """Run one statement (in a worker thread), until it ends or ``cancelled`` is set.

        Raises:
            StoreError: The read failed (or was stopped: no one waits for it then).
        """
        connection.set_progress_handler(cancelled.is_set, _STEPS)
        try:
            return connection.execute(statement, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"read from {self._path} failed: {exc}") from exc
        finally:
            connection.set_progress_handler(None, 0)

    def _ended(self, connection: sqlite3.Connection, running: "asyncio.Future[Any]") -> None:
        """A scan's thread is done with ``connection``: keep it for the next scan, or close it."""
        if not running.cancelled():
            running.exception()  # taken: the error of a scan no one waits for any more ends here
        if self._closed or len(self._idle) >= KEPT:
            connection.close()
        else:
            self._idle.append(connection)


__all__ = ["KEPT", "SqliteScans"]
