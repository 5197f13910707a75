"""Properties of the Merkle tree: every proof verifies, and any change to it fails."""

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from thoughtledger.ledger.merkle import (
    CompactRange,
    consistency_ranges,
    inclusion_ranges,
    leaf_hash,
    needed_nodes,
    proof_from_leaves,
    range_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)

sizes = st.integers(min_value=1, max_value=300)


def leaves(size: int) -> list[bytes]:
    return [leaf_hash(hashlib.sha256(str(i).encode()).digest()) for i in range(size)]


def directions(index: int, size: int) -> list[bool]:
    """Whether each proof hash sits left of the path (what a proof commits to besides hashes)."""
    return [start <= index for start, _ in inclusion_ranges(index, size)]


@given(sizes, st.data())
def test_every_inclusion_proof_verifies(size: int, data: st.DataObject) -> None:
    tree = leaves(size)
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    proof = proof_from_leaves(tree, inclusion_ranges(index, size))
    assert verify_inclusion(tree[index], index, size, proof, root_of(tree))


@given(sizes, st.data())
def test_a_flipped_byte_anywhere_fails_an_inclusion_proof(size: int, data: st.DataObject) -> None:
    tree = leaves(size)
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    proof = proof_from_leaves(tree, inclusion_ranges(index, size))
    root = root_of(tree)
    target = data.draw(st.integers(min_value=0, max_value=len(proof) + 1))
    at = data.draw(st.integers(min_value=0, max_value=31))
    bit = data.draw(st.integers(min_value=0, max_value=7))

    def flip(digest: bytes) -> bytes:
        return digest[:at] + bytes([digest[at] ^ (1 << bit)]) + digest[at + 1 :]

    leaf = tree[index]
    if target == len(proof):
        leaf = flip(leaf)
    elif target == len(proof) + 1:
        root = flip(root)
    else:
        proof[target] = flip(proof[target])
    assert not verify_inclusion(leaf, index, size, proof, root)


@given(sizes, st.data())
def test_a_wrong_index_or_size_fails_an_inclusion_proof(size: int, data: st.DataObject) -> None:
    tree = leaves(size)
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    proof = proof_from_leaves(tree, inclusion_ranges(index, size))
    root = root_of(tree)
    other = data.draw(st.integers(min_value=0, max_value=size + 5).filter(lambda i: i != index))
    assert not verify_inclusion(tree[index], other, size, proof, root)
    wrong_size = data.draw(st.integers(min_value=0, max_value=2 * size + 2))
    if wrong_size != size:
        # A proof commits to the hashes and to which side each sits; a size giving the same
        # sides cannot be told apart by the proof (the signed checkpoint carries the size).
        same_shape = index < wrong_size and directions(index, wrong_size) == directions(index, size)
        assert verify_inclusion(tree[index], index, wrong_size, proof, root) == same_shape


@given(sizes, st.data())
def test_every_consistency_proof_verifies(size: int, data: st.DataObject) -> None:
    tree = leaves(size)
    old = data.draw(st.integers(min_value=0, max_value=size))
    proof = proof_from_leaves(tree, consistency_ranges(old, size))
    assert verify_consistency(old, size, proof, root_of(tree[:old]), root_of(tree))


@given(sizes, st.data())
def test_a_changed_consistency_proof_fails(size: int, data: st.DataObject) -> None:
    tree = leaves(size)
    old = data.draw(st.integers(min_value=1, max_value=size))
    proof = proof_from_leaves(tree, consistency_ranges(old, size))
    old_root, new_root = root_of(tree[:old]), root_of(tree)
    wrong_old = data.draw(st.integers(min_value=1, max_value=size).filter(lambda s: s != old))
    assert not verify_consistency(wrong_old, size, proof, old_root, new_root)
    if proof:
        target = data.draw(st.integers(min_value=0, max_value=len(proof) - 1))
        at = data.draw(st.integers(min_value=0, max_value=31))
        flipped = list(proof)
        flipped[target] = (
            flipped[target][:at] + bytes([flipped[target][at] ^ 1]) + (flipped[target][at + 1 :])
        )
        assert not verify_consistency(old, size, flipped, old_root, new_root)
    # A rewritten leaf inside the old prefix: the old root no longer follows.
    forged = list(tree)
    victim = data.draw(st.integers(min_value=0, max_value=old - 1))
    forged[victim] = leaf_hash(b"forged")
    forged_proof = proof_from_leaves(forged, consistency_ranges(old, size))
    assert not verify_consistency(old, size, forged_proof, old_root, root_of(forged))


@given(sizes, st.data())
def test_proofs_from_stored_subtrees_equal_proofs_from_every_leaf(
    size: int, data: st.DataObject
) -> None:
    tree = leaves(size)
    grown = CompactRange()
    nodes: dict[tuple[int, int], bytes] = {}
    for leaf in tree:
        for level, index, digest in grown.append(leaf):
            nodes[level, index] = digest
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    old = data.draw(st.integers(min_value=0, max_value=size))
    for ranges in (inclusion_ranges(index, size), consistency_ranges(old, size)):
        assert needed_nodes(ranges) <= nodes.keys()
        assert [range_hash(a, b, nodes) for a, b in ranges] == proof_from_leaves(tree, ranges)
    assert grown.root() == root_of(tree)
    folded = CompactRange()
    folded.extend(tree)
    assert (folded.size, folded.peaks, folded.root()) == (grown.size, grown.peaks, grown.root())
    raw = [hashlib.sha256(str(i).encode()).digest() for i in range(size)]
    from_hex = CompactRange()
    from_hex.extend_hex([d.hex() for d in raw])
    assert from_hex.root() == grown.root()
