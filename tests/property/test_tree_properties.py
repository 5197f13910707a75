"""The tree a store keeps, grown in any steps, answers exactly the proofs of the whole log."""

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.factories import thought
from thoughtledger.ledger.merkle import (
    consistency_ranges,
    inclusion_ranges,
    leaf_hash,
    proof_from_leaves,
    root_of,
    verify_consistency,
)
from thoughtledger.ledger.store.log_tree import TreeHead
from thoughtledger.ledger.store.memory import MemoryEventStore

steps = st.lists(
    st.tuples(st.integers(min_value=1, max_value=90), st.booleans()), min_size=1, max_size=8
)


@settings(max_examples=40, deadline=None)
@given(steps, st.data())
def test_a_tree_grown_in_any_steps_proves_what_the_whole_log_proves(
    plan: list[tuple[int, bool]], data: st.DataObject
) -> None:
    async def run() -> None:
        store = MemoryEventStore()
        heads: list[TreeHead] = []
        for step, (count, checkpoint) in enumerate(plan):
            await store.append(
                f"s{step}", [thought(n) for n in range(1, count + 1)], expected_version=0
            )
            if checkpoint:
                heads.append(await store.tree.tree_head())
        heads.append(await store.tree.tree_head())
        log = await store.read_all(limit=10_000)
        leaves = [leaf_hash(bytes.fromhex(r.hash)) for r in log]
        last = heads[-1]
        assert last == TreeHead(len(leaves), root_of(leaves))
        index = data.draw(st.integers(min_value=0, max_value=len(leaves) - 1))
        size = data.draw(st.integers(min_value=index + 1, max_value=len(leaves)))
        proof = await store.tree.inclusion_proof(log[index].position, size)
        assert proof.path == proof_from_leaves(leaves, inclusion_ranges(index, size))
        for old in heads:
            path = await store.tree.consistency_proof(old.size, last.size)
            assert path == proof_from_leaves(leaves, consistency_ranges(old.size, last.size))
            assert verify_consistency(old.size, last.size, path, old.root, last.root)

    asyncio.run(run())
