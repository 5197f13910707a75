"""The SQLite store's held writer connection: its transactions, and work between group commits.

Appends are committed in groups by the store (:mod:`thoughtledger.ledger.store.sqlite.store`), which
marks the connection :attr:`SqliteWriter.flushing` meanwhile; imports, redactions and the Merkle
tree's extensions open transactions of their own on the same connection, in between
(:meth:`SqliteWriter.between_commits`), and are retried while another process holds the write lock.
"""

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from thoughtledger.ledger.errors import LedgerError, StoreError, StoreUnavailableError
from thoughtledger.ledger.store.sqlite.setup import BUSY_BUDGET_SECONDS, is_busy

_T = TypeVar("_T")


class Busy(Exception):
    """Another connection holds the write lock."""


class SqliteWriter:
    """The held writer connection of a SQLite store, and whether a group commit holds it (a part).

    Args:
        connection: The connection (for a store opened read-only, its reader: never written).
        path: The database file, for error messages.
        read_only: Refuse every write.

    Attributes:
        connection: The held connection.
        flushing: Whether a group commit is under way (set and cleared by the store's appends).
        idle: Set whenever no group commit is under way.
        closed: Whether the store was closed.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path, *, read_only: bool) -> None:
        self.connection = connection
        self.path = path
        self.read_only = read_only
        self.flushing = False
        self.idle = asyncio.Event()
        self.idle.set()
        self.closed = False

    def close(self) -> None:
        """Close the connection; every later write is refused."""
        self.closed = True
        self.connection.close()

    def begin(self) -> sqlite3.Connection:
        """Start a write transaction on the writer connection and return it.

        Raises:
            Busy: Another connection holds the write lock.
            StoreError: The transaction cannot start.
        """
        if self.read_only:
            raise StoreError(f"the ledger at {self.path} was opened read-only; nothing was written")
        db = self.connection
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise Busy from exc
            raise StoreError(f"cannot start a write on {self.path}: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"cannot start a write on {self.path}: {exc}") from exc
        return db

    def roll_back_after(
        self, exc: BaseException, doing: str, *, integrity: LedgerError | None = None
    ) -> None:
        """Roll back the write ``exc`` interrupted and raise what it means for the caller.

        Returns only when ``exc`` is not a driver error; the caller then re-raises it.

        Raises:
            Busy: Another connection held the lock; retry later.
            LedgerError: ``integrity``, when given and ``exc`` broke a uniqueness rule.
            StoreError: Any other driver error.
        """
        with contextlib.suppress(sqlite3.Error):  # a failed COMMIT may have rolled back
            self.connection.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
            raise Busy from exc
        if integrity is not None and isinstance(exc, sqlite3.IntegrityError):
            raise integrity from exc
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"{doing} {self.path} failed: {exc}") from exc

    async def between_commits(self, work: Callable[[], _T], undone: str) -> _T:
        """Run ``work`` on the writer connection between group commits, retried while busy.

        ``work`` opens its own transaction (:meth:`begin`, which raises :class:`Busy` while
        another connection holds the write lock) and must not await: from the wait below to its
        end, no append can start on the held connection.

        Raises:
            StoreError: The store is closed.
            StoreUnavailableError: Another writer kept the lock past the budget (``undone``
                says what was not done).
        """
        deadline = time.monotonic() + BUSY_BUDGET_SECONDS
        delay = 0.001
        while True:
            while self.flushing:
                await self.idle.wait()
            if self.closed:
                raise StoreError("the store is closed")
            try:
                return work()
            except Busy:
                if time.monotonic() + delay > deadline:
                    raise StoreUnavailableError(
                        f"the ledger at {self.path} stayed locked by another writer for "
                        f"{BUSY_BUDGET_SECONDS:.0f} s; {undone}"
                    ) from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.1)


__all__ = ["Busy", "SqliteWriter"]
