"""On PostgreSQL a later commit can hold a lower position: the tree never grows past it."""

from pathlib import Path

import asyncpg
import pytest

from tests.support.backends import backend_for, dsn, settled
from tests.support.factories import thought
from thoughtledger.ledger.chain import GENESIS_HASH, prepare, seal
from thoughtledger.ledger.events import PAYLOAD_SCHEMA_VERSION
from thoughtledger.ledger.ids import new_event_id
from thoughtledger.ledger.merkle import leaf_hash, root_of, verify_consistency, verify_inclusion
from thoughtledger.ledger.store.base import utc_now

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

INSERT = """
INSERT INTO tl_events (position, session_id, version, event_id, recorded_at, schema_version,
                       event_type, payload, prev_hash, hash)
VALUES ((pg_current_xact_id()::text::bigint << 16) + 1, $1, 1, $2::uuid, $3, $4, $5, $6,
        decode($7, 'hex'), decode($8, 'hex'))
"""


async def test_an_event_committed_late_with_a_lower_position_never_lands_in_a_checkpoint(
    tmp_path: Path,
) -> None:
    async with backend_for("postgres", tmp_path) as backend:
        store = await backend.open()
        try:
            await store.append("before", [thought(1), thought(2)], expected_version=0)
            await settled(store, 2)
            url = backend.url
            assert url is not None
            slow = await asyncpg.connect(
                dsn(url.split("?")[0]), server_settings={"search_path": backend.schema}
            )
            try:
                # A writer whose transaction began first (a lower transaction id, so a lower
                # position) and commits last: it holds its insert open across the others.
                transaction = slow.transaction()
                await transaction.start()
                sealed = seal(
                    "slow",
                    prepare([thought(1, "slow")], max_event_bytes=1 << 20),
                    version=0,
                    head_hash=GENESIS_HASH,
                    event_ids=[new_event_id()],
                    recorded_at=utc_now(),
                )[0]
                await slow.execute(
                    INSERT,
                    "slow",
                    sealed.event_id_text,
                    sealed.recorded_at,
                    PAYLOAD_SCHEMA_VERSION,
                    sealed.event_type,
                    sealed.payload,
                    sealed.prev_hash,
                    sealed.hash,
                )
                fast = await store.append("fast", [thought(1, "fast")], expected_version=0)
                checkpointed = await store.tree.tree_head()
                # Neither the open insert nor what committed after it began is in the tree.
                assert checkpointed.size == 2
                assert await store.tree.leaf_index(fast[0].position) is None
                await transaction.commit()
            finally:
                await slow.close()
            await settled(store, 4)
            grown = await store.tree.tree_head()
            assert grown.size == 4
            log = await store.read_all()
            assert [r.session_id for r in log] == ["before", "before", "slow", "fast"]
            positions = [r.position for r in log]
            assert positions == sorted(positions)
            assert grown.root == root_of([leaf_hash(bytes.fromhex(r.hash)) for r in log])
            proof = await store.tree.consistency_proof(checkpointed.size, grown.size)
            assert verify_consistency(2, 4, proof, checkpointed.root, grown.root)
            for index, record in enumerate(log):
                inclusion = await store.tree.inclusion_proof(record.position, grown.size)
                leaf = leaf_hash(bytes.fromhex(record.hash))
                assert verify_inclusion(leaf, index, grown.size, inclusion.path, grown.root)
        finally:
            await store.aclose()
