"""The Merkle tree over a store's log, built the same way on every backend's stored rows.

See :mod:`thoughtledger.ledger.store.log_tree` for what is stored and why the tree only grows over
events no later commit can precede. A backend hands its :class:`TreeRows` to a
:class:`StoredTree` and answers :class:`~thoughtledger.ledger.store.log_tree.LogTree` from it.
"""

from collections.abc import Collection, Iterable

from thoughtledger.ledger.errors import IntegrityError, InvalidInputError
from thoughtledger.ledger.merkle import (
    CompactRange,
    NodeId,
    consistency_ranges,
    full_subtrees,
    inclusion_ranges,
    leaf_hash,
    needed_nodes,
    range_hash,
)
from thoughtledger.ledger.store.log_tree import (
    BLOCK,
    BLOCK_LEVEL,
    PAGE,
    InclusionProof,
    StoredNode,
    TreeHead,
    TreeRows,
    TreeTip,
)

_RACES = 5
"""Extensions lost to another writer before giving up (each loser re-reads and retries)."""


class StoredTree:
    """A store's :class:`.LogTree`, grown and read through the backend's :class:`TreeRows`.

    Args:
        rows: What the backend stores of the tree, and the log's hashes.
        read_only: Answer the tree as stored, never extending it (a store opened read-only).
    """

    def __init__(self, rows: TreeRows, *, read_only: bool = False) -> None:
        self._rows = rows
        self._read_only = read_only
        self._memo: tuple[TreeTip, CompactRange, list[int]] | None = None

    # -- the tree ------------------------------------------------------------------------------

    async def tree_head(self) -> TreeHead:
        """Extend the tree over every event that can no longer be preceded, and return its head.

        A store opened read-only answers the tree as stored, without extending it.

        Raises:
            IntegrityError: The stored tree does not match the log under it (tampered with).
            StoreError: The backend failed.
        """
        if self._read_only:
            return await self._stored_head()
        for _ in range(_RACES):
            tip, tree, block = await self._grown()
            while True:
                rows = await self._rows.hashes(after=tip.position)
                if not rows:
                    self._memo = (tip, tree, block)
                    return TreeHead(tree.size, tree.root())
                nodes: list[StoredNode] = []
                for position, digest in rows:
                    if tree.size % BLOCK == 0:
                        block = []
                    block.append(position)
                    for level, index, node in tree.append(leaf_hash(bytes.fromhex(digest))):
                        if level == BLOCK_LEVEL:
                            nodes.append(StoredNode(level, index, node.hex(), block[0], position))
                        elif level > BLOCK_LEVEL:
                            nodes.append(StoredNode(level, index, node.hex()))
                new = TreeTip(tree.size, rows[-1][0])
                self._memo = None  # until the write is known to have happened
                if not await self._rows.grow(tip, new, nodes):
                    break  # another writer extended the tree meanwhile: start again from its tip
                tip = new
                if len(rows) < PAGE:  # the last page: no need to ask again
                    self._memo = (tip, tree, block)
                    return TreeHead(tree.size, tree.root())
        return await self._stored_head()

    async def _grown(self) -> tuple[TreeTip, CompactRange, list[int]]:
        """The tree as this store last extended it, or as stored when it has not (a copy).

        Remembering it saves reading the tree back before each extension; a stale memory is
        harmless, since an extension from the wrong tip is refused by the tip's guard (then
        the memory is dropped and the stored tree read).
        """
        memo = self._memo
        if memo is None:
            tip = await self._rows.tip()
            tree, block = await self._resume(tip)
            return tip, tree, block
        tip, tree, block = memo
        return tip, CompactRange(tree.size, list(tree.peaks)), list(block)

    async def _stored_head(self) -> TreeHead:
        tree, _ = await self._resume(await self._rows.tip())
        return TreeHead(tree.size, tree.root())

    async def _resume(self, tip: TreeTip) -> tuple[CompactRange, list[int]]:
        """The stored tree at ``tip`` as a compact range, and the positions of its last block.

        Raises:
            IntegrityError: Stored rows are missing or do not match the log.
        """
        full = tip.size - tip.size % BLOCK
        nodes = await self._nodes_above(full_subtrees(0, full))
        tree = CompactRange.of(full, nodes.__getitem__)
        tail = await self._tail(tip)
        for _, digest in tail:
            tree.append(leaf_hash(bytes.fromhex(digest)))
        return tree, [position for position, _ in tail]

    async def _tail(self, tip: TreeTip) -> list[tuple[int, str]]:
        """The leaves after the last full block, up to the tip: ``(position, hash)``."""
        count = tip.size % BLOCK
        if count == 0:
            return []
        after = 0
        if tip.size >= BLOCK:
            block = await self._rows.block(tip.size // BLOCK - 1)
            if block is None:
                raise IntegrityError("the stored Merkle tree lacks a block; it was tampered with")
            after = block[1]
        rows = await self._rows.hashes(after=after, through=tip.position, limit=BLOCK)
        if len(rows) != count or rows[-1][0] != tip.position:
            raise IntegrityError("the log no longer holds the events the stored Merkle tree covers")
        return rows

    async def _nodes_above(self, ids: Iterable[NodeId]) -> dict[NodeId, bytes]:
        wanted = set(ids)
        found = await self._rows.nodes(wanted) if wanted else {}
        missing = wanted - found.keys()
        if missing:
            raise IntegrityError(
                f"the stored Merkle tree lacks {len(missing)} subtree(s); it was tampered with"
            )
        return found

    async def _hashes(self, ids: Collection[NodeId], tip: TreeTip) -> dict[NodeId, bytes]:
        """Return the hashes of full subtrees ``ids`` of the tree at ``tip``."""
        high = {node for node in ids if node[0] >= BLOCK_LEVEL}
        found = await self._nodes_above(high)
        blocks = {(index << level) >> BLOCK_LEVEL for level, index in set(ids) - high}
        for block in sorted(blocks):
            leaves = await self._block_leaves(block, tip)
            grown = CompactRange()
            for _, digest in leaves:
                for level, index, node in grown.append(leaf_hash(bytes.fromhex(digest))):
                    found[level, index + (block << (BLOCK_LEVEL - level))] = node
        return found

    async def _block_leaves(self, block: int, tip: TreeTip) -> list[tuple[int, str]]:
        if block < tip.size // BLOCK:
            stored = await self._rows.block(block)
            if stored is None:
                raise IntegrityError("the stored Merkle tree lacks a block; it was tampered with")
            first, last = stored
            rows = await self._rows.hashes(after=first - 1, through=last, limit=BLOCK)
            if len(rows) != BLOCK or rows[0][0] != first:
                raise IntegrityError("the log no longer holds the events of a Merkle tree block")
            return rows
        return await self._tail(tip)

    # -- proofs --------------------------------------------------------------------------------

    async def leaf_index(self, position: int) -> int | None:
        """Return the leaf index of the event at ``position``, or ``None`` when the tree lacks it.

        Raises:
            IntegrityError: The stored tree does not match the log.
            StoreError: The backend failed.
        """
        tip = await self._rows.tip()
        if position > tip.position or position <= 0:
            return None
        at = await self._rows.block_at(position)
        if at is not None:
            block, first, last = at
            rows = await self._rows.hashes(after=first - 1, through=last, limit=BLOCK)
            base = block * BLOCK
        else:
            rows = await self._tail(tip)
            base = tip.size - tip.size % BLOCK
        for offset, (stored, _) in enumerate(rows):
            if stored == position:
                return base + offset
        return None

    async def inclusion_proof(self, position: int, size: int) -> InclusionProof:
        """Return the proof that the event at ``position`` is in the tree of ``size`` leaves.

        Raises:
            InvalidInputError: The tree of ``size`` does not hold that event, or the tree is
                not that large yet (ask :meth:`tree_head` first).
            IntegrityError: The stored tree does not match the log.
            StoreError: The backend failed.
        """
        tip = await self._rows.tip()
        if not 0 < size <= tip.size:
            raise InvalidInputError(f"the tree has {tip.size} leaves, not {size}")
        index = await self.leaf_index(position)
        if index is None or index >= size:
            raise InvalidInputError(f"the tree of {size} leaves holds no event at {position}")
        ranges = inclusion_ranges(index, size)
        nodes = await self._hashes(needed_nodes(ranges), tip)
        return InclusionProof(index, size, [range_hash(a, b, nodes) for a, b in ranges])

    async def consistency_proof(self, old_size: int, new_size: int) -> list[bytes]:
        """Return the proof that the tree of ``old_size`` is a prefix of the one of ``new_size``.

        Raises:
            InvalidInputError: ``old_size`` above ``new_size``, or the tree not that large yet.
            IntegrityError: The stored tree does not match the log.
            StoreError: The backend failed.
        """
        tip = await self._rows.tip()
        if not 0 <= old_size <= new_size <= tip.size:
            raise InvalidInputError(
                f"cannot prove {old_size} leaves a prefix of {new_size} in a tree of {tip.size}"
                + (" (sign a checkpoint of this ledger first)" if new_size > tip.size else "")
            )
        ranges = consistency_ranges(old_size, new_size)
        nodes = await self._hashes(needed_nodes(ranges), tip)
        return [range_hash(a, b, nodes) for a, b in ranges]

    async def tree_root(self, size: int) -> bytes:
        """Return the stored tree's root over its first ``size`` leaves.

        Raises:
            InvalidInputError: The tree is not that large yet (ask :meth:`tree_head` first).
            IntegrityError: The stored tree does not match the log.
            StoreError: The backend failed.
        """
        tip = await self._rows.tip()
        if not 0 <= size <= tip.size:
            raise InvalidInputError(f"the tree has {tip.size} leaves, not {size}")
        if size == 0:
            return CompactRange().root()
        nodes = await self._hashes(needed_nodes([(0, size)]), tip)
        return range_hash(0, size, nodes)

    async def log_root(self, size: int) -> TreeHead:
        """Recompute the root over the first ``size`` events from the log itself.

        Trusts nothing of the stored tree: what verification against a checkpoint compares.

        Returns:
            The head over ``min(size, events the log holds)`` events.

        Raises:
            StoreError: The backend failed.
        """
        tree = CompactRange()
        after = 0
        while tree.size < size:
            rows = await self._rows.hashes(after=after, limit=min(PAGE, size - tree.size))
            if not rows:
                break
            tree.extend_hex([digest for _, digest in rows])
            after = rows[-1][0]
        return TreeHead(tree.size, tree.root())


__all__ = ["StoredTree"]
