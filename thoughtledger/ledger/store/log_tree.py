"""The Merkle tree a store keeps over its log, and the proofs it answers from it (a capability).

:class:`LogTree` is what a store answers; :class:`TreeRows` is what a backend stores, and
:class:`~thoughtledger.ledger.store.stored_tree.StoredTree` builds the one on the other, the same
for every backend.

The tree's leaves are the log's events in position order, each leaf the event's stored hash
(:mod:`thoughtledger.ledger.merkle`). The tree covers a *prefix* of the log: it is extended (by
:meth:`LogTree.tree_head`, never on the append path, so appends cost what they did) over the
events after its last leaf that no later commit can precede. On PostgreSQL a position is
``(transaction id << 16) + n`` and a transaction that commits later can hold a lower position, so
the tree only grows over positions below the oldest transaction still in flight, as
:meth:`~thoughtledger.ledger.store.base.EventStore.read_all` does: nothing can ever land inside a
prefix the tree covered, and so inside a checkpoint.

What is stored (and what it costs): the full subtrees from :data:`BLOCK_LEVEL` up, about one row
per 32 events; a subtree at that level (a *block* of 64 leaves) records the positions of its first
and last event, so the hashes below it are recomputed from those 64 events when a proof needs them,
and the tree's tip (size, last position) guards each extension. None of it is trusted by
verification (which recomputes the root from the log): a wrong row makes a proof that fails
against a checkpoint, never one that passes.
"""

from abc import abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from thoughtledger.ledger.merkle import NodeId

BLOCK_LEVEL = 6
"""The lowest level of the tree a store keeps: blocks of ``2 ** BLOCK_LEVEL`` leaves."""
BLOCK = 1 << BLOCK_LEVEL
PAGE = 10_000
"""Events read per page while extending or recomputing the tree."""


@dataclass(frozen=True, slots=True)
class TreeTip:
    """How far the stored tree reaches: ``size`` leaves, the last at ``position`` (0: none)."""

    size: int
    position: int


@dataclass(frozen=True, slots=True)
class StoredNode:
    """A full subtree to store: ``(level, index)``, its hex hash, and for a block its events."""

    level: int
    index: int
    hash: str
    first_position: int | None = None
    last_position: int | None = None


@dataclass(frozen=True, slots=True)
class TreeHead:
    """The tree over the first ``size`` events of the log, and its root.

    Attributes:
        size: How many events (leaves) the tree covers.
        root: Its root hash (32 bytes).
    """

    size: int
    root: bytes


@dataclass(frozen=True, slots=True)
class InclusionProof:
    """Where one event sits in the tree of a given size, and the hashes that show it.

    Attributes:
        index: The event's leaf index (its rank in position order, from 0).
        size: The tree size the proof is for.
        path: The audit path (RFC 9162), leaf first.
    """

    index: int
    size: int
    path: list[bytes]


@runtime_checkable
class TreeRows(Protocol):
    """What a backend keeps of the tree, and the log's hashes it is grown from (a store's part)."""

    @abstractmethod
    async def tip(self) -> TreeTip:
        """Return the stored tree's tip (size 0 at position 0 when nothing is stored).

        Raises:
            StoreError: The backend failed.
        """

    @abstractmethod
    async def nodes(self, ids: Collection[NodeId]) -> dict[NodeId, bytes]:
        """Return the stored hashes of those ``ids`` (all at :data:`BLOCK_LEVEL` or above).

        Raises:
            StoreError: The backend failed.
        """

    @abstractmethod
    async def block(self, index: int) -> tuple[int, int] | None:
        """Return the first and last position of stored block ``index``, if it is stored.

        Raises:
            StoreError: The backend failed.
        """

    @abstractmethod
    async def block_at(self, position: int) -> tuple[int, int, int] | None:
        """Return (index, first, last position) of the stored block holding ``position``.

        Raises:
            StoreError: The backend failed.
        """

    @abstractmethod
    async def hashes(
        self, *, after: int, through: int | None = None, limit: int = PAGE
    ) -> list[tuple[int, str]]:
        """Return ``(position, hash)`` of up to ``limit`` events after ``after``, in order.

        Only events no later commit can precede (see the module docstring), up to ``through``
        (inclusive) when given.

        Raises:
            StoreError: The backend failed.
        """

    @abstractmethod
    async def grow(self, old: TreeTip, new: TreeTip, nodes: Sequence[StoredNode]) -> bool:
        """Store ``nodes`` and move the tip from ``old`` to ``new``, atomically.

        Returns:
            False, having written nothing, when the tip is no longer ``old`` (another writer
            extended the tree first).

        Raises:
            StoreError: The backend failed, or is read-only.
        """


@runtime_checkable
class LogTree(Protocol):
    """The Merkle tree over a store's log, and the proofs it answers (a store capability).

    The tree only ever grows over events no later commit can precede, so a checkpoint's prefix
    is never changed by a later commit.
    """

    @abstractmethod
    async def tree_head(self) -> TreeHead:
        """Extend the tree over every event that can no longer be preceded, and return its head.

        A store opened read-only answers the tree as stored, without extending it.

        Raises:
            IntegrityError: The stored tree does not match the log under it (tampered with).
            StoreError: The backend failed.
        """

    @abstractmethod
    async def leaf_index(self, position: int) -> int | None:
        """Return the leaf index of the event at ``position``, or ``None`` when the tree lacks it.

        Raises:
            IntegrityError: The stored tree does not match the log.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def inclusion_proof(self, position: int, size: int) -> InclusionProof:
        """Return the proof that the event at ``position`` is in the tree of ``size`` leaves.

        Raises:
            InvalidInputError: The tree of ``size`` does not hold that event, or the tree is
                not that large yet (ask :meth:`tree_head` first).
            IntegrityError: The stored tree does not match the log.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def consistency_proof(self, old_size: int, new_size: int) -> list[bytes]:
        """Return the proof that the tree of ``old_size`` is a prefix of the one of ``new_size``.

        Raises:
            InvalidInputError: ``old_size`` above ``new_size``, or the tree not that large yet.
            IntegrityError: The stored tree does not match the log.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def tree_root(self, size: int) -> bytes:
        """Return the stored tree's root over its first ``size`` leaves.

        Raises:
            InvalidInputError: The tree is not that large yet (ask :meth:`tree_head` first).
            IntegrityError: The stored tree does not match the log.
            StoreError: The backend failed.
        """

    @abstractmethod
    async def log_root(self, size: int) -> TreeHead:
        """Recompute the root over the first ``size`` events from the log itself.

        Trusts nothing of the stored tree: what verification against a checkpoint compares.

        Returns:
            The head over ``min(size, events the log holds)`` events.

        Raises:
            StoreError: The backend failed.
        """


__all__ = [
    "BLOCK",
    "BLOCK_LEVEL",
    "PAGE",
    "InclusionProof",
    "LogTree",
    "StoredNode",
    "TreeHead",
    "TreeRows",
    "TreeTip",
]
