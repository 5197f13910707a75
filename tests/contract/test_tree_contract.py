"""The Merkle tree over the log: every backend keeps it and answers the same proofs."""

import asyncio

import pytest

from tests.support.backends import Backend, settled
from tests.support.factories import thought
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.merkle import leaf_hash, root_of, verify_consistency, verify_inclusion
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.log_tree import BLOCK, TreeHead

pytestmark = pytest.mark.anyio


async def fill(store: LedgerStore, sessions: int, per: int) -> None:
    for s in range(sessions):
        await store.append(f"s{s}", [thought(n) for n in range(1, per + 1)], expected_version=0)
    await settled(store, sessions * per)


async def leaves(store: LedgerStore) -> list[tuple[int, bytes]]:
    return [
        (r.position, leaf_hash(bytes.fromhex(r.hash))) for r in await store.read_all(limit=10_000)
    ]


async def test_an_empty_log_has_the_empty_tree(store: LedgerStore) -> None:
    head = await store.tree.tree_head()
    assert (head.size, head.root) == (0, root_of([]))


async def test_the_tree_covers_the_log_in_position_order(store: LedgerStore) -> None:
    await fill(store, 5, 31)
    head = await store.tree.tree_head()
    log = await leaves(store)
    assert head.size == len(log) == 155
    assert head.root == root_of([leaf for _, leaf in log])
    assert await store.tree.log_root(head.size) == head
    for size in (0, 1, 63, 64, 65, 100, head.size):
        assert await store.tree.tree_root(size) == root_of([leaf for _, leaf in log[:size]])


async def test_every_event_has_an_inclusion_proof(store: LedgerStore) -> None:
    await fill(store, 2, BLOCK + 7)
    head = await store.tree.tree_head()
    log = await leaves(store)
    for index, (position, leaf) in enumerate(log):
        assert await store.tree.leaf_index(position) == index
        sizes = {head.size, index + 1} if index % 5 == 0 else {head.size}
        for size in sizes:
            proof = await store.tree.inclusion_proof(position, size)
            root = root_of([leaf for _, leaf in log[:size]])
            assert proof.index == index
            assert verify_inclusion(leaf, index, size, proof.path, root)


async def test_the_tree_only_grows_and_each_head_is_a_prefix_of_the_next(
    store: LedgerStore,
) -> None:
    heads = []
    for round_ in range(4):
        await store.append(
            f"r{round_}", [thought(n) for n in range(1, 40 + round_)], expected_version=0
        )
        await settled(store, sum(39 + r for r in range(round_ + 1)))
        heads.append(await store.tree.tree_head())
    assert [h.size for h in heads] == sorted(h.size for h in heads)
    for old in heads:
        for new in heads:
            if old.size <= new.size:
                proof = await store.tree.consistency_proof(old.size, new.size)
                assert verify_consistency(old.size, new.size, proof, old.root, new.root)


async def test_a_proof_beyond_the_tree_is_refused(store: LedgerStore) -> None:
    await fill(store, 1, 3)
    head = await store.tree.tree_head()
    recorded = await store.append("late", [thought(1)], expected_version=0)
    await settled(store, 4)
    with pytest.raises(InvalidInputError, match="holds no event"):
        await store.tree.inclusion_proof(recorded[0].position, head.size)
    with pytest.raises(InvalidInputError, match="leaves"):
        await store.tree.inclusion_proof(recorded[0].position, head.size + 1)
    with pytest.raises(InvalidInputError, match="cannot prove"):
        await store.tree.consistency_proof(head.size, head.size + 1)
    assert await store.tree.leaf_index(recorded[0].position) is None
    assert (await store.tree.tree_head()).size == head.size + 1
    assert await store.tree.leaf_index(recorded[0].position) == head.size


async def test_two_writers_extending_the_tree_at_once_agree(backend: Backend) -> None:
    first, second = await backend.open(), await backend.open()
    try:
        await fill(first, 4, 50)
        heads = await asyncio.gather(
            first.tree.tree_head(), second.tree.tree_head(), first.tree.tree_head()
        )
        assert len(set(heads)) == 1
        log = await leaves(first)
        assert heads[0] == TreeHead(len(log), root_of([leaf for _, leaf in log]))
        await second.append("later", [thought(n) for n in range(1, 91)], expected_version=0)
        await settled(second, 290)
        grown = await asyncio.gather(second.tree.tree_head(), first.tree.tree_head())
        assert grown[0] == grown[1]
        proof = await first.tree.consistency_proof(heads[0].size, grown[0].size)
        assert verify_consistency(heads[0].size, grown[0].size, proof, heads[0].root, grown[0].root)
    finally:
        await first.aclose()
        if second is not first:
            await second.aclose()
