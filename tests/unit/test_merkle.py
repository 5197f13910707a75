"""The Merkle tree against RFC 6962's published test vectors."""

import pytest

from tests.support import ct_vectors as ct
from thoughtledger.ledger.merkle import (
    EMPTY_ROOT,
    CompactRange,
    consistency_ranges,
    inclusion_ranges,
    leaf_hash,
    proof_from_leaves,
    range_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)

LEAVES = [leaf_hash(data) for data in ct.LEAVES]


def hexes(hashes: list[bytes]) -> list[str]:
    return [h.hex() for h in hashes]


def test_the_empty_tree_has_the_published_root() -> None:
    assert EMPTY_ROOT.hex() == ct.EMPTY_ROOT == root_of([]).hex()


@pytest.mark.parametrize("size", range(1, 9))
def test_roots_match_the_published_vectors(size: int) -> None:
    assert root_of(LEAVES[:size]).hex() == ct.ROOTS[size - 1]


@pytest.mark.parametrize(("number", "size", "path"), ct.INCLUSION)
def test_inclusion_proofs_match_the_published_vectors(
    number: int, size: int, path: list[str]
) -> None:
    index = number - 1
    proof = proof_from_leaves(LEAVES[:size], inclusion_ranges(index, size))
    assert hexes(proof) == path
    root = bytes.fromhex(ct.ROOTS[size - 1])
    assert verify_inclusion(LEAVES[index], index, size, proof, root)


@pytest.mark.parametrize(("old", "new", "path"), ct.CONSISTENCY)
def test_consistency_proofs_match_the_published_vectors(
    old: int, new: int, path: list[str]
) -> None:
    proof = proof_from_leaves(LEAVES[:new], consistency_ranges(old, new))
    assert hexes(proof) == path
    old_root, new_root = bytes.fromhex(ct.ROOTS[old - 1]), bytes.fromhex(ct.ROOTS[new - 1])
    assert verify_consistency(old, new, proof, old_root, new_root)


@pytest.mark.parametrize(("number", "size", "path"), ct.INCLUSION[1:])
def test_a_corrupted_inclusion_proof_fails(number: int, size: int, path: list[str]) -> None:
    index, root = number - 1, bytes.fromhex(ct.ROOTS[size - 1])
    proof = [bytes.fromhex(h) for h in path]
    some = bytes.fromhex("abacaba000000000000000000000000000000000000000000060061e00123456")
    leaf = LEAVES[index]
    wrong = [
        (leaf, index - 1, size, proof, root),
        (leaf, index + 1, size, proof, root),
        (leaf, index ^ 2, size, proof, root),
        (leaf, index, size * 2, proof, root),
        (leaf, index, size // 2, proof, root),
        (b"WrongLeaf", index, size, proof, root),
        (leaf, index, size, proof, EMPTY_ROOT),
        (leaf, index, size, proof, some),
        (leaf, index, size, [*proof, b""], root),
        (leaf, index, size, [*proof, root], root),
        (leaf, index, size, [b"", *proof], root),
        (leaf, index, size, [root, *proof], root),
        (leaf, index, size, proof[:-1], root),
        (leaf, index, size, [proof[0], some, *proof[1:]], root),
    ]
    for i in range(len(proof)):
        flipped = list(proof)
        flipped[i] = bytes([flipped[i][0] ^ 8]) + flipped[i][1:]
        wrong.append((leaf, index, size, flipped, root))
    for case in wrong:
        assert not verify_inclusion(*case), case


@pytest.mark.parametrize(("old", "new", "path"), ct.CONSISTENCY[1:])
def test_a_corrupted_consistency_proof_fails(old: int, new: int, path: list[str]) -> None:
    r1, r2 = bytes.fromhex(ct.ROOTS[old - 1]), bytes.fromhex(ct.ROOTS[new - 1])
    proof = [bytes.fromhex(h) for h in path]
    wrong = [
        (old - 1, new, proof, r1, r2),
        (old + 1, new, proof, r1, r2),
        (old ^ 2, new, proof, r1, r2),
        (old, new * 2, proof, r1, r2),
        (old, new // 2, proof, r1, r2),
        (old, new, proof, b"WrongRoot", r2),
        (old, new, proof, r1, b"WrongRoot"),
        (old, new, proof, r2, r1),
        (old, new, [], r1, r2),
        (old, new, [*proof, b""], r1, r2),
        (old, new, [*proof, r1], r1, r2),
        (old, new, [*proof, r2], r1, r2),
        (old, new, [b"", *proof], r1, r2),
        (old, new, [r1, *proof], r1, r2),
        (old, new, [r2, *proof], r1, r2),
        (old, new, [proof[0], *proof], r1, r2),
        (old, new, proof[:-1], r1, r2),
    ]
    for i in range(len(proof)):
        flipped = list(proof)
        flipped[i] = bytes([flipped[i][0] ^ 16]) + flipped[i][1:]
        wrong.append((old, new, flipped, r1, r2))
    for case in wrong:
        assert not verify_consistency(*case), case


def test_trivial_consistency_needs_an_empty_proof_and_equal_roots() -> None:
    r1, r2 = bytes.fromhex(ct.ROOTS[0]), bytes.fromhex(ct.ROOTS[1])
    assert verify_consistency(0, 0, [], EMPTY_ROOT, EMPTY_ROOT)
    assert verify_consistency(0, 2, [], EMPTY_ROOT, r2)
    assert verify_consistency(1, 1, [], r1, r1)
    assert not verify_consistency(1, 1, [], r1, r2)
    assert not verify_consistency(1, 1, [EMPTY_ROOT], r1, r1)
    assert not verify_consistency(2, 1, [], r2, r1)
    assert not verify_consistency(1, 2, [], r1, r2)


def test_a_compact_range_reports_every_full_subtree_it_completes() -> None:
    tree = CompactRange()
    nodes: dict[tuple[int, int], bytes] = {}
    for leaf in LEAVES:
        for level, index, digest in tree.append(leaf):
            nodes[level, index] = digest
        assert tree.root() == root_of(LEAVES[: tree.size])
    assert range_hash(0, 8, nodes).hex() == ct.ROOTS[7]
    assert range_hash(4, 7, nodes) == proof_from_leaves(LEAVES, [(4, 7)])[0]
    resumed = CompactRange.of(5, lambda node: nodes[node])
    assert resumed.root().hex() == ct.ROOTS[4]


def test_out_of_range_proofs_are_refused() -> None:
    with pytest.raises(ValueError, match="not in a tree"):
        inclusion_ranges(3, 3)
    with pytest.raises(ValueError, match="cannot be a prefix"):
        consistency_ranges(4, 3)
