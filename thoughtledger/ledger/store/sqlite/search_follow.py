"""The SQLite search index follows the log: thoughts are indexed in batches after their append.

Why. FTS5 writes a new segment, its structure record and its totals at every commit that adds
a document. Done by a trigger in each append's own transaction (schema steps 9 and 10), that was
half the cost of a one-event append: 198 µs against 105 µs without it, and 10.4 pages written
to the write-ahead log per commit against 4.4. Indexed in batches, the same thoughts cost FTS5
one segment per batch.

How. Schema step 11 dropped the trigger and added ``tl_search_through``: the position up to
which every thought of the log is indexed. The writer brings the index up to the log's end

* in an append's own transaction, once :data:`INDEX_LAG` events wait (a steady stream of
  appends never leaves it far behind, and the batch rides on a commit already paid for);
* between commits, :data:`INDEX_DELAY` seconds after a commit that left events waiting (when
  appends pause, the index catches up at once);
* in every import's transaction, when a store opens for writing, and when it closes.

A search reads the thoughts after ``tl_search_through`` from the log itself and matches them in
Python (:func:`thoughtledger.ledger.store.search.matching_hits`), so a thought is found from the
moment its append answers: by this process or another, by a reader that never writes, and after
a crash that left thoughts waiting. The redaction trigger touches only an indexed thought; one
still waiting is indexed later, from its payload as redacted (no text).
"""

import asyncio
import sqlite3

from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.store.search_text import SQLITE_FILL
from thoughtledger.ledger.store.sqlite.writer import SqliteWriter

INDEX_LAG = 256
"""Events appended (by this process) before an append's transaction indexes what waits."""
INDEX_DELAY = 0.05
"""Seconds after a commit that left events waiting before the writer indexes them."""
INDEX_CHUNK = 5_000
"""The most events one catch-up between commits covers (the writer is held meanwhile)."""

THROUGH = "SELECT position FROM tl_search_through WHERE id = 1"
_MOVE = "UPDATE tl_search_through SET position = ? WHERE id = 1"
_END = "SELECT max(position) FROM tl_events"
_BEHIND = f"SELECT ({THROUGH}) < coalesce(({_END}), 0)"
_CHUNK_END = "SELECT position FROM tl_events WHERE position > ? ORDER BY position LIMIT 1 OFFSET ?"


def index_waiting(db: sqlite3.Connection, *, limit: int | None = None) -> bool:
    """Index the thoughts after ``tl_search_through``, in the caller's write transaction.

    Args:
        db: The writer connection, in a transaction.
        limit: Index at most this many events (``None``: up to the log's end).

    Returns:
        Whether events still wait (only when ``limit`` stopped short of the end).

    Raises:
        sqlite3.Error: The database failed (the caller rolls its transaction back).
    """
    row = db.execute(THROUGH).fetchone()
    through = row[0]
    end = db.execute(_END).fetchone()[0] or 0
    more = False
    if limit is not None and end - through > limit:
        # Positions are dense on SQLite but need not be: count events, not positions.
        found = db.execute(_CHUNK_END, (through, limit - 1)).fetchone()
        if found is not None and found[0] < end:
            end, more = found[0], True
    if end > through:
        db.execute(SQLITE_FILL, {"low": through, "high": end})
        db.execute(_MOVE, (end,))
    return more


class SearchFollower:
    """Keeps a writable SQLite store's search index up to the log's end (a part of the store).

    Args:
        writer: The store's writer connection.
    """

    def __init__(self, writer: SqliteWriter) -> None:
        self._writer = writer
        self._waiting = 0
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    def in_append(self, db: sqlite3.Connection, appended: int) -> None:
        """Count an append's events; past :data:`INDEX_LAG`, index what waits in its transaction.

        Args:
            db: The writer connection, in the append's transaction.
            appended: Events the append writes.

        Raises:
            sqlite3.Error: The database failed (the append is rolled back, as for any failure).
        """
        self._waiting += appended
        if self._waiting >= INDEX_LAG:
            index_waiting(db)
            # Counted as indexed even if the append then rolls back: the next catch-up reads
            # where the index really stands.
            self._waiting = 0

    def catch_up_soon(self) -> None:
        """Plan a catch-up if thoughts wait (an opening: a writer may have stopped before them).

        One read on the writer connection, outside any transaction: an opening whose index is
        complete, the usual case, takes no write lock for it, now or when the store closes.

        Raises:
            sqlite3.Error: The database failed.
        """
        if self._writer.connection.execute(_BEHIND).fetchone()[0]:
            self._waiting = max(self._waiting, 1)
            self.after_commit()

    def after_commit(self) -> None:
        """Plan a catch-up between commits, soon, when events wait."""
        if self._waiting and self._timer is None and self._task is None and not self._closing:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(INDEX_DELAY, self._start)

    def _start(self) -> None:
        self._timer = None
        self._task = asyncio.get_running_loop().create_task(self.catch_up())

    async def catch_up(self) -> None:
        """Index everything that waits, a chunk per transaction, between commits.

        A failure leaves the index behind, which every search makes up for by reading the
        log after it; it is logged, never raised (nothing waits on this but the close).
        """
        try:
            self._waiting = 0
            while await self._writer.between_commits(self._chunk, "the search index waits"):
                pass
        except StoreError as exc:
            _log("search_index_behind", error=str(exc))
        finally:
            self._task = None
        self.after_commit()  # appends that came meanwhile

    def _chunk(self) -> bool:
        connection = self._writer.connection
        # Committed without its own fsync, whatever the store's durability: what it writes is
        # derived from the log, a power loss takes back the index and tl_search_through together
        # (the next catch-up does it again), and the next synchronous commit syncs it anyway.
        # So a catch-up never waits for the disk on the event loop.
        synchronous = connection.execute("PRAGMA synchronous").fetchone()[0]
        connection.execute("PRAGMA synchronous = NORMAL")
        try:
            db = self._writer.begin()
            try:
                more = index_waiting(db, limit=INDEX_CHUNK)
                db.execute("COMMIT")
            except BaseException as exc:
                self._writer.roll_back_after(exc, "index the thoughts of")
                raise
        finally:
            connection.execute(f"PRAGMA synchronous = {int(synchronous)}")
        return more

    async def close(self) -> None:
        """Index what waits before the store closes (a closed ledger's index is complete)."""
        self._closing = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None:
            await self._task
        if self._waiting:  # else nothing of this store's waits: no write lock to take
            await self.catch_up()


def _log(event: str, **facts: object) -> None:
    """Log through structlog, imported on first use (a server must not pay for it at start)."""
    import structlog

    structlog.get_logger("thoughtledger.ledger.store.sqlite").warning(event, **facts)


__all__ = ["INDEX_CHUNK", "INDEX_DELAY", "INDEX_LAG", "THROUGH", "SearchFollower", "index_waiting"]
