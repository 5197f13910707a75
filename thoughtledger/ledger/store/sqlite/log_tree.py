"""The SQLite backend's Merkle tree reads and writes (see :mod:`.ledger.store.log_tree`).

Read inline on the store's held reader connection, like its other short reads: a proof is a
handful of indexed lookups, and recomputing a root scans ``(position, hash)`` pages, both far
cheaper without a hop to a driver thread. Every committed event is visible to a reader: SQLite has
one writer at a time, so a later commit never takes a lower position.
An extension is written like an import: between group commits, on the writer connection
(:mod:`thoughtledger.ledger.store.sqlite.writer`).
"""

import sqlite3
from collections.abc import Collection, Sequence

from thoughtledger.ledger.merkle import NodeId
from thoughtledger.ledger.store.log_tree import BLOCK_LEVEL, PAGE, StoredNode, TreeTip
from thoughtledger.ledger.store.sqlite.reads import SqliteReader
from thoughtledger.ledger.store.sqlite.writer import SqliteWriter
from thoughtledger.ledger.store.stored_forms import hash_text

TIP = "SELECT size, position FROM tl_tree WHERE id = 1"
NODE = "SELECT hash FROM tl_tree_nodes WHERE level = ? AND idx = ?"
BLOCK = "SELECT first_position, last_position FROM tl_tree_nodes WHERE level = ? AND idx = ?"
BLOCK_AT = (
    "SELECT idx, first_position, last_position FROM tl_tree_nodes "
    "WHERE first_position IS NOT NULL AND first_position <= ? "
    "ORDER BY first_position DESC LIMIT 1"
)
HASHES = "SELECT position, hash FROM tl_events WHERE position > ? ORDER BY position LIMIT ?"
HASHES_THROUGH = (
    "SELECT position, hash FROM tl_events WHERE position > ? AND position <= ? "
    "ORDER BY position LIMIT ?"
)
FIRST_TIP = "INSERT INTO tl_tree (id, size, position) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING"
MOVE_TIP = "UPDATE tl_tree SET size = ?, position = ? WHERE id = 1 AND size = ? AND position = ?"
INSERT_NODE = (
    "INSERT INTO tl_tree_nodes (level, idx, hash, first_position, last_position) "
    "VALUES (?, ?, ?, ?, ?)"
)


class SqliteTree:
    """The SQLite store's :class:`~thoughtledger.ledger.store.log_tree.TreeRows` (a part).

    Args:
        reader: The store's reader connection, for the tree's reads.
        writer: The store's writer connection, for its extensions.
    """

    def __init__(self, reader: SqliteReader, writer: SqliteWriter) -> None:
        self._read = reader.read
        self._writer = writer

    async def tip(self) -> TreeTip:
        """See :meth:`.TreeRows.tip`."""
        rows = self._read(TIP, ())
        return TreeTip(rows[0][0], rows[0][1]) if rows else TreeTip(0, 0)

    async def nodes(self, ids: Collection[NodeId]) -> dict[NodeId, bytes]:
        """See :meth:`.TreeRows.nodes`."""
        found: dict[NodeId, bytes] = {}
        for node in ids:
            rows = self._read(NODE, node)
            if rows:
                found[node] = bytes.fromhex(rows[0][0])
        return found

    async def block(self, index: int) -> tuple[int, int] | None:
        """See :meth:`.TreeRows.block`."""
        rows = self._read(BLOCK, (BLOCK_LEVEL, index))
        return (rows[0][0], rows[0][1]) if rows else None

    async def block_at(self, position: int) -> tuple[int, int, int] | None:
        """See :meth:`.TreeRows.block_at`."""
        rows = self._read(BLOCK_AT, (position,))
        if not rows or rows[0][2] < position:
            return None
        return rows[0][0], rows[0][1], rows[0][2]

    async def hashes(
        self, *, after: int, through: int | None = None, limit: int = PAGE
    ) -> list[tuple[int, str]]:
        """See :meth:`.TreeRows.hashes` (every committed event: SQLite has one writer at a time)."""
        if through is None:
            rows = self._read(HASHES, (after, limit))
        else:
            rows = self._read(HASHES_THROUGH, (after, through, limit))
        return [(position, hash_text(digest)) for position, digest in rows]

    async def grow(self, old: TreeTip, new: TreeTip, nodes: Sequence[StoredNode]) -> bool:
        """See :meth:`.TreeRows.grow`.

        Like an import: between group commits, on the writer connection, retried while busy.
        """
        return await self._writer.between_commits(
            lambda: self._grow_now(old, new, nodes), "the Merkle tree was not extended"
        )

    def _grow_now(self, old: TreeTip, new: TreeTip, nodes: Sequence[StoredNode]) -> bool:
        db = self._writer.begin()
        try:
            moved = grow(db, old, new, nodes)
            db.execute("COMMIT" if moved else "ROLLBACK")
        except BaseException as exc:
            self._writer.roll_back_after(exc, "extend the Merkle tree in")
            raise
        return moved


def grow(db: sqlite3.Connection, old: TreeTip, new: TreeTip, nodes: Sequence[StoredNode]) -> bool:
    """Move the tip from ``old`` to ``new`` and store ``nodes``, in the caller's transaction.

    Returns:
        False, having written nothing, when the tip is no longer ``old``.
    """
    if old.size == 0:
        moved = db.execute(FIRST_TIP, (new.size, new.position)).rowcount
    else:
        moved = db.execute(MOVE_TIP, (new.size, new.position, old.size, old.position)).rowcount
    if moved != 1:
        return False
    db.executemany(
        INSERT_NODE,
        [(n.level, n.index, n.hash, n.first_position, n.last_position) for n in nodes],
    )
    return True


__all__ = ["SqliteTree", "grow"]
