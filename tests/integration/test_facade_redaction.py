"""Who may redact: a writer its own sessions, an auditor any; the ledger's own user anything."""

import pytest

from thoughtledger.api.access import Principal
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.errors import SessionNotFoundError
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio

CALL = {"thought": "t", "thought_number": 1, "total_thoughts": 1, "next_thought_needed": False}


async def test_a_writer_redacts_its_own_sessions_and_an_auditor_any() -> None:
    ledger = Ledger(MemoryEventStore())
    try:
        mine = (await ledger.think(None, CALL, owner="alice")).session_id
        unowned = (await ledger.think(None, CALL)).session_id
        for principal in (Principal("bob"), Principal("alice", "reader")):
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
        other = (await ledger.think(None, CALL, owner="bob")).session_id
        audited = await ledger.redaction.redact(
            other, reason="a pasted key", by="audrey", principal=Principal("audrey", "auditor")
        )
        assert audited.stripped == 1
    finally:
        await ledger.aclose()
