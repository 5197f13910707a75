"""The Merkle tree over the log (RFC 9162 hashing): roots, inclusion and consistency proofs.

Pure: no I/O, no clock. The log's leaves, in position order, are the events' stored hashes (the
32 bytes their hex spells); a leaf is hashed as ``SHA-256(0x00 || data)`` and an interior node as
``SHA-256(0x01 || left || right)``, exactly as Certificate Transparency hashes its logs, so any
RFC 6962/9162 verifier checks the proofs this module makes.

Proofs are described first as *ranges* of leaves (``[start, end)``, the subtrees whose hashes a
proof carries, computed from the sizes alone), so that a store can fetch every hash a proof needs
in one read: a range's hash is the hash of its *full subtrees* (aligned power-of-two ranges, see
:func:`full_subtrees`), combined right to left (:func:`range_hash`).
"""

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

HASH_SIZE = 32
"""Bytes in every hash of the tree (SHA-256)."""

EMPTY_ROOT = hashlib.sha256(b"").digest()
"""The root of the tree with no leaves (RFC 9162: the hash of the empty string)."""

NodeId = tuple[int, int]
"""A full subtree: ``(level, index)`` covers leaves ``[index << level, (index + 1) << level)``."""


def leaf_hash(data: bytes) -> bytes:
    """Return the tree's hash of one leaf: ``SHA-256(0x00 || data)``."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """Return the tree's hash of an interior node: ``SHA-256(0x01 || left || right)``."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two strictly below ``size`` (``size`` >= 2)."""
    return 1 << ((size - 1).bit_length() - 1)


def full_subtrees(start: int, end: int) -> list[NodeId]:
    """Return the full subtrees that make up the leaves ``[start, end)``, left to right.

    ``start`` must be where the RFC tree places a subtree (every range a proof names is), so the
    decomposition is the one the tree's own recursion makes.
    """
    nodes: list[NodeId] = []
    while start < end:
        size = end - start
        if size & (size - 1) == 0 and start % size == 0:
            nodes.append((size.bit_length() - 1, start // size))
            break
        left = _split(size)
        nodes.append((left.bit_length() - 1, start // left))
        start += left
    return nodes


def range_hash(start: int, end: int, nodes: Mapping[NodeId, bytes]) -> bytes:
    """Return the hash of the subtree over leaves ``[start, end)`` from its full subtrees' hashes.

    Raises:
        KeyError: ``nodes`` lacks one of :func:`full_subtrees` ``(start, end)``.
    """
    parts = [nodes[node] for node in full_subtrees(start, end)]
    digest = parts[-1]
    for part in reversed(parts[:-1]):
        digest = node_hash(part, digest)
    return digest


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """Return the ranges whose hashes prove leaf ``index`` in a tree of ``size`` (RFC 9162 PATH).

    Listed from the leaf up, as the proof carries them.

    Raises:
        ValueError: ``index`` is not below ``size``.
    """
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    ranges: list[tuple[int, int]] = []
    start, end = 0, size
    while end - start > 1:
        k = _split(end - start)
        if index < start + k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
    ranges.reverse()
    return ranges


def consistency_ranges(old_size: int, new_size: int) -> list[tuple[int, int]]:
    """Return the ranges whose hashes prove a tree of ``old_size`` a prefix of one of ``new_size``.

    RFC 9162 SUBPROOF, listed as the proof carries them. Empty when either size is 0 or they are
    equal (nothing needs proving).

    Raises:
        ValueError: ``old_size`` is above ``new_size``, or a size is negative.
    """
    if not 0 <= old_size <= new_size:
        raise ValueError(f"a tree of {old_size} cannot be a prefix of one of {new_size}")
    if old_size in (0, new_size):
        return []
    ranges: list[tuple[int, int]] = []
    start, end, whole = 0, new_size, True
    m = old_size
    while m != end - start:
        k = _split(end - start)
        if m <= k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            m -= k
            start += k
            whole = False
    if not whole:
        ranges.append((start, end))
    ranges.reverse()
    return ranges


def needed_nodes(ranges: Iterable[tuple[int, int]]) -> set[NodeId]:
    """Return the full subtrees whose hashes the ``ranges`` are made of."""
    return {node for start, end in ranges for node in full_subtrees(start, end)}


def root_of(leaves: Sequence[bytes]) -> bytes:
    """Return the root of the tree over ``leaves`` (already leaf-hashed), in one pass."""
    tree = CompactRange()
    for leaf in leaves:
        tree.append(leaf)
    return tree.root()


def _subtree(leaves: Sequence[bytes], start: int, end: int) -> bytes:
    """The hash of ``leaves[start:end]`` by the RFC's recursion (a reference for small trees)."""
    if end - start == 1:
        return leaves[start]
    k = _split(end - start)
    return node_hash(_subtree(leaves, start, start + k), _subtree(leaves, start + k, end))


def proof_from_leaves(leaves: Sequence[bytes], ranges: Iterable[tuple[int, int]]) -> list[bytes]:
    """Return the hashes of ``ranges`` computed from every leaf (a tree held whole in memory)."""
    return [_subtree(leaves, start, end) for start, end in ranges]


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> bool:
    """Whether ``proof`` shows ``leaf`` (leaf-hashed) at ``index`` in the tree (``size``, ``root``).

    RFC 9162 section 2.1.3.2. Only well-formed input verifies: hashes of 32 bytes, an index
    below the size, and exactly as many proof hashes as that path has.
    """
    if not 0 <= index < size or len(leaf) != HASH_SIZE or len(root) != HASH_SIZE:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0 or len(p) != HASH_SIZE:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    old_size: int, new_size: int, proof: Sequence[bytes], old_root: bytes, new_root: bytes
) -> bool:
    """Whether ``proof`` shows the tree (``old_size``, ``old_root``) a prefix of the newer one.

    RFC 9162 section 2.1.4.2; equal sizes need equal roots and an empty proof, and the empty
    tree is a prefix of every tree (with an empty proof).
    """
    if not 0 <= old_size <= new_size or any(len(p) != HASH_SIZE for p in proof):
        return False
    if old_size == new_size:
        return not proof and old_root == new_root and len(new_root) == HASH_SIZE
    if old_size == 0:
        return not proof and len(new_root) == HASH_SIZE
    if not proof:
        return False
    path = list(proof)
    if old_size & (old_size - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == old_root and sr == new_root and sn == 0


@dataclass(slots=True)
class CompactRange:
    """A tree grown leaf by leaf that keeps only its full subtrees' roots (at most one per level).

    What extends a stored tree: :meth:`append` returns every full subtree a new leaf completes,
    so a store can keep them for later proofs, and :meth:`root` is the tree's root at any size.

    Attributes:
        size: The leaves appended so far.
        peaks: The roots of the full subtrees the leaves form, as ``(level, hash)``, largest
            (leftmost) first.
    """

    size: int = 0
    peaks: list[tuple[int, bytes]] = field(default_factory=list)

    @classmethod
    def of(cls, size: int, node: Callable[[NodeId], bytes]) -> "CompactRange":
        """Resume a tree of ``size`` leaves from its full subtrees (``node(level, index)``).

        Raises:
            KeyError: ``node`` lacks one of the subtrees (from a store that lost it).
        """
        peaks = [(level, node((level, index))) for level, index in full_subtrees(0, size)]
        return cls(size, peaks)

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        """Add a (leaf-hashed) leaf; return the full subtrees it completes (level, index, hash).

        The leaf itself comes first, at level 0.
        """
        index = self.size
        completed = [(0, index, leaf)]
        level, digest = 0, leaf
        while self.peaks and self.peaks[-1][0] == level:
            _, left = self.peaks.pop()
            digest = node_hash(left, digest)
            level += 1
            completed.append((level, index >> level, digest))
        self.peaks.append((level, digest))
        self.size += 1
        return completed

    def extend(self, leaves: Iterable[bytes]) -> None:
        """Add (leaf-hashed) leaves, keeping nothing but the peaks (recomputing a root)."""
        self._fold(leaves, hashed=True)

    def extend_hex(self, data: Iterable[str]) -> None:
        """Add leaves given as the hex of their data (events' stored hashes), hashing each.

        The hot loop of verifying a ledger against a checkpoint: one pass, no call per leaf.
        """
        self._fold(data, hashed=False)

    def _fold(self, items: Iterable[Any], *, hashed: bool) -> None:
        peaks = self.peaks
        size = self.size
        sha256 = hashlib.sha256
        fromhex = bytes.fromhex
        for item in items:
            digest = item if hashed else sha256(b"\x00" + fromhex(item)).digest()
            # The peaks merge as the size's bits carry: one merge per trailing 1 bit.
            carry, level = size, 0
            while carry & 1:
                digest = sha256(b"\x01" + peaks.pop()[1] + digest).digest()
                carry >>= 1
                level += 1
            peaks.append((level, digest))
            size += 1
        self.size = size

    def root(self) -> bytes:
        """Return the root over every leaf appended so far."""
        if not self.peaks:
            return EMPTY_ROOT
        digest = self.peaks[-1][1]
        for _, left in reversed(self.peaks[:-1]):
            digest = node_hash(left, digest)
        return digest


__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "CompactRange",
    "NodeId",
    "consistency_ranges",
    "full_subtrees",
    "inclusion_ranges",
    "leaf_hash",
    "needed_nodes",
    "node_hash",
    "proof_from_leaves",
    "range_hash",
    "root_of",
    "verify_consistency",
    "verify_inclusion",
]
