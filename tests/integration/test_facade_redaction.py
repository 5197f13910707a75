"""Who may redact: a principal only what it may write; the ledger's own user anything."""

import pytest

from thoughtledger.api.access import Principal
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.errors import SessionNotFoundError
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio

CALL = {"thought": "t", "thought_number": 1, "total_thoughts": 1, "next_thought_needed": False}


async def test_a_principal_redacts_only_the_sessions_it_may_write() -> None:
    ledger = Ledger(MemoryEventStore())
    try:
        mine = (await ledger.think(None, CALL, owner="alice")).session_id
        unowned = (await ledger.think(None, CALL)).session_id
        for principal in (
            Principal("bob"),
            Principal("alice", "auditor"),
            Principal("alice", "reader"),
        ):
            with pytest.raises(SessionNotFoundError):
                await ledger.redaction.redact(
                    mine, reason="r", by=principal.name, principal=principal
                )
        with pytest.raises(SessionNotFoundError):
            await ledger.redaction.redact(
                unowned, reason="r", by="alice", principal=Principal("alice")
            )
        assert (await ledger.state(mine)).version == 2
        done = await ledger.redaction.redact(
            mine, reason="r", by="alice", principal=Principal("alice")
        )
        assert done.stripped == 1
        assert (await ledger.redaction.redact(unowned, reason="r", by="admin")).stripped == 1
    finally:
        await ledger.aclose()
