"""Redacting a session with more thoughts than one append carries."""

import pytest

from thoughtledger import Ledger
from thoughtledger.ledger.content import REDACTED
from thoughtledger.ledger.events import ThoughtRedacted
from thoughtledger.ledger.store.base import MAX_BATCH
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio


async def test_every_thought_of_a_session_longer_than_one_append_is_redacted() -> None:
    thoughts = MAX_BATCH + 3
    ledger = Ledger(MemoryEventStore())
    try:
        session = await ledger.new_session()
        for number in range(1, thoughts + 1):
            await session.process_sequential_thinking(
                thought=f"secret {number}",
                thought_number=number,
                total_thoughts=thoughts,
                next_thought_needed=number < thoughts,
            )

        report = await ledger.redaction.redact(session.id, reason="erasure request", by="dpo")

        assert (len(report.redacted), report.recorded, report.stripped) == (thoughts,) * 3
        records = await ledger.events(session.id)
        marks = [r for r in records if isinstance(r.event, ThoughtRedacted)]
        assert len(marks) == thoughts
        assert all("secret" not in r.payload for r in records)
        state = await ledger.state(session.id)
        assert {item.thought for item in state.thoughts} == {REDACTED}
        assert (await ledger.verify(session.id)).ok
    finally:
        await ledger.aclose()
