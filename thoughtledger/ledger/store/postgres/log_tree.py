"""The PostgreSQL backend's Merkle tree rows (see :mod:`thoughtledger.ledger.store.log_tree`).

Read through the store's engine, like its other reads, and only over positions no transaction
still in flight can precede (:mod:`thoughtledger.ledger.store.postgres.positions`); an extension
goes through one of the store's held writer connections, like an append.
"""

from collections.abc import Awaitable, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import sqlalchemy as sa

from thoughtledger.ledger.errors import StoreError, StoreUnavailableError
from thoughtledger.ledger.merkle import NodeId
from thoughtledger.ledger.store.log_tree import BLOCK_LEVEL, PAGE, StoredNode, TreeTip
from thoughtledger.ledger.store.postgres.positions import visible_below
from thoughtledger.ledger.store.schema import events as EVENTS
from thoughtledger.ledger.store.schema import tree_nodes as NODES
from thoughtledger.ledger.store.schema import tree_tip as TIP
from thoughtledger.ledger.store.stored_forms import hash_text

_ID_CHUNK = 1000
"""Nodes looked up per query (well within the driver's limit on bound parameters)."""

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

Fetch = Callable[["sa.Select[Any]"], Awaitable[list["sa.Row[Any]"]]]


class PostgresTree:
    """The PostgreSQL store's :class:`~thoughtledger.ledger.store.log_tree.TreeRows` (a part).

    Args:
        fetch: The store's read (a lost connection retried, errors translated).
        writer: Lends a held writer connection's driver, once the store is checked writable.
        where: How to name the database in error messages.
    """

    def __init__(
        self,
        fetch: Fetch,
        writer: Callable[[str], AbstractAsyncContextManager[Any]],
        where: str,
    ) -> None:
        self._fetch = fetch
        self._writer = writer
        self._where = where

    async def tip(self) -> TreeTip:
        """See :meth:`.TreeRows.tip`."""
        rows = await self._fetch(sa.select(TIP.c.size, TIP.c.position).where(TIP.c.id == 1))
        return TreeTip(rows[0].size, rows[0].position) if rows else TreeTip(0, 0)

    async def nodes(self, ids: Collection[NodeId]) -> dict[NodeId, bytes]:
        """See :meth:`.TreeRows.nodes`."""
        wanted = sorted(ids)
        found: dict[NodeId, bytes] = {}
        for start in range(0, len(wanted), _ID_CHUNK):
            rows = await self._fetch(
                sa.select(NODES.c.level, NODES.c.idx, NODES.c.hash).where(
                    sa.tuple_(NODES.c.level, NODES.c.idx).in_(wanted[start : start + _ID_CHUNK])
                )
            )
            found.update(((row.level, row.idx), bytes.fromhex(row.hash)) for row in rows)
        return found

    async def block(self, index: int) -> tuple[int, int] | None:
        """See :meth:`.TreeRows.block`."""
        rows = await self._fetch(
            sa.select(NODES.c.first_position, NODES.c.last_position).where(
                NODES.c.level == BLOCK_LEVEL, NODES.c.idx == index
            )
        )
        return (rows[0].first_position, rows[0].last_position) if rows else None

    async def block_at(self, position: int) -> tuple[int, int, int] | None:
        """See :meth:`.TreeRows.block_at`."""
        rows = await self._fetch(
            sa.select(NODES.c.idx, NODES.c.first_position, NODES.c.last_position)
            .where(NODES.c.first_position.isnot(None), NODES.c.first_position <= position)
            .order_by(NODES.c.first_position.desc())
            .limit(1)
        )
        if not rows or rows[0].last_position < position:
            return None
        return rows[0].idx, rows[0].first_position, rows[0].last_position

    async def hashes(
        self, *, after: int, through: int | None = None, limit: int = PAGE
    ) -> list[tuple[int, str]]:
        """See :meth:`.TreeRows.hashes` (below the oldest transaction in flight)."""
        query = sa.select(EVENTS.c.position, EVENTS.c.hash).where(
            EVENTS.c.position > after, visible_below()
        )
        if through is not None:
            query = query.where(EVENTS.c.position <= through)
        rows = await self._fetch(query.order_by(EVENTS.c.position).limit(limit))
        return [(row.position, hash_text(row.hash)) for row in rows]

    async def grow(self, old: TreeTip, new: TreeTip, nodes: Sequence[StoredNode]) -> bool:
        """See :meth:`.TreeRows.grow` (one statement on a held writer connection)."""
        import asyncpg

        try:
            async with self._writer("nothing was written") as driver:
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
