"""The PostgreSQL backend's Merkle tree upkeep: extending the stored tree over the log.

The tree's reads are the shared SQL ones (:class:`~thoughtledger.ledger.store.sql.SqlEventStore`);
an extension goes through one of the store's held writer connections, like an append.
"""

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from thoughtledger.ledger.errors import StoreError, StoreUnavailableError
from thoughtledger.ledger.store.log_tree import StoredNode, TreeTip
from thoughtledger.ledger.store.sql import SqlEventStore

# One statement (one round trip, atomic without a transaction): move the tree's tip only if it is
# still where this extension started (a racing extender waits on the row, then finds it moved),
# and store the new subtrees only if it moved. Every value is bound.
_GROW_TREE = """
WITH tip AS (
    UPDATE tl_tree SET size = $1, position = $2
    WHERE id = 1 AND size = $3 AND position = $4
    RETURNING 1
), first_tip AS (
    INSERT INTO tl_tree (id, size, position) SELECT 1, $1, $2 WHERE $3 = 0
    ON CONFLICT (id) DO NOTHING
    RETURNING 1
), moved AS (
    SELECT 1 FROM tip UNION ALL SELECT 1 FROM first_tip
), stored AS (
    INSERT INTO tl_tree_nodes (level, idx, hash, first_position, last_position)
    SELECT n.level, n.idx, n.hash, n.first_position, n.last_position
    FROM (SELECT 1 FROM moved LIMIT 1) AS m,
         unnest($5::smallint[], $6::bigint[], $7::text[], $8::bigint[], $9::bigint[])
             AS n(level, idx, hash, first_position, last_position)
    RETURNING 1
)
SELECT count(*) FROM moved
"""


class PostgresTree(SqlEventStore):
    """The tree's extension in one statement (a base of the PostgreSQL store)."""

    read_only: bool

    def _writer(self) -> AbstractAsyncContextManager[Any]:
        """Lend a held writer connection's driver (the store's own)."""
        raise NotImplementedError

    async def _tree_grow(self, old: TreeTip, new: TreeTip, nodes: Sequence[StoredNode]) -> bool:
        import asyncpg

        if self._closed:
            raise StoreError("the store is closed")
        if self.read_only:
            raise StoreError(f"{self._where} was opened read-only; nothing was written")
        try:
            async with self._writer() as driver:
                moved = await driver.fetchval(
                    _GROW_TREE,
                    new.size,
                    new.position,
                    old.size,
                    old.position,
                    [n.level for n in nodes],
                    [n.index for n in nodes],
                    [n.hash for n in nodes],
                    [n.first_position for n in nodes],
                    [n.last_position for n in nodes],
                )
        except asyncpg.PostgresError as exc:  # the driver's errors are translated right here
            raise StoreError(f"extending the Merkle tree in {self._where} failed: {exc}") from exc
        except OSError as exc:  # TimeoutError included
            raise StoreUnavailableError(f"cannot reach {self._where}: {exc}") from exc
        return bool(moved)


__all__ = ["PostgresTree"]
