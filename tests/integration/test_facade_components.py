"""The ledger's components stand on their own: each is built from a store (and a narrow port).

``ledger.proofs``, ``ledger.transfer``, ``ledger.redaction`` and ``ledger.stats`` are the same
classes a caller can build over a store directly; redaction records through a port the ledger
satisfies (:meth:`Ledger.append_redactions`), and any other object with that method will do.
"""

from collections.abc import Sequence
from typing import Any

import pytest

from tests.support.backends import settled
from thoughtledger import Ledger
from thoughtledger.api import Proofs, Redaction, Statistics, Transfer
from thoughtledger.ledger.checkpoint import Signer
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import ConcurrencyError, InvalidInputError
from thoughtledger.ledger.events import SessionCleared, ThoughtRedacted
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio


def thought(number: int, total: int = 2) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": number < total,
    }


async def two_thoughts(ledger: Ledger, session_id: str = "s-1") -> str:
    await ledger.think(session_id, thought(1))
    await ledger.think(session_id, thought(2))
    return session_id


class CountingLog:
    """A redaction log that hands appends on to a ledger, keeping what it was given."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.given: list[ThoughtRedacted] = []

    async def append_redactions(
        self, session_id: str, redactions: Sequence[ThoughtRedacted], *, expected_version: int
    ) -> list[RecordedEvent]:
        self.given += redactions
        return await self.ledger.append_redactions(
            session_id, redactions, expected_version=expected_version
        )


async def test_the_ledgers_components_are_reached_from_it(store: LedgerStore) -> None:
    ledger = Ledger(store)

    assert isinstance(ledger.proofs, Proofs)
    assert isinstance(ledger.transfer, Transfer)
    assert isinstance(ledger.redaction, Redaction)
    assert isinstance(ledger.stats, Statistics)


async def test_proofs_built_on_a_store_sign_what_the_ledger_recorded(store: LedgerStore) -> None:
    ledger = Ledger(store)
    session_id = await two_thoughts(ledger)
    signer = Signer.generate("ledger.example/log")
    await settled(store, 3)

    note = await Proofs(store, store.tree).checkpoint(signer)
    bundle = await Proofs(store, store.tree).prove(session_id, 2, note)

    assert (await ledger.proofs.verify_checkpoint(note, signer.verifier())).ok
    assert bundle["event"]["sessionId"] == session_id


async def test_transfer_and_statistics_built_on_a_store_read_the_whole_log(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    await two_thoughts(ledger, "s-a")
    await two_thoughts(ledger, "s-b")

    transfer = Transfer(store, store.rows, store.imports, store.redaction)
    exported = [[r.version for r in part] async for part in transfer.export()]
    figures = await Statistics(store, store.stats, store.rows, store.loop_marks).summarize()

    assert exported == [[1, 2, 3], [1, 2, 3]]
    assert figures.as_dict() == (await ledger.stats.summarize()).as_dict()


async def test_redaction_records_through_the_log_it_is_given(store: LedgerStore) -> None:
    ledger = Ledger(store)
    session_id = await two_thoughts(ledger)
    log = CountingLog(ledger)

    report = await Redaction(store, store.redaction, log).redact(
        session_id, thought_number=2, reason="a pasted key", by="ops"
    )

    assert [event.thought_number for event in log.given] == [2]
    assert (report.recorded, report.stripped) == (1, 1)
    assert (await ledger.state(session_id)).thoughts[1].redacted


async def test_only_redactions_at_the_sessions_version_are_appended_that_way(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    session_id = await two_thoughts(ledger)
    redacted = ThoughtRedacted(
        event_id="00000000-0000-7000-8000-000000000000",
        version=2,
        thought_number=1,
        by="ops",
        reason="r",
    )

    with pytest.raises(InvalidInputError):
        await ledger.append_redactions(
            session_id,
            [SessionCleared(reason="no")],  # type: ignore[list-item]  # what the check refuses
            expected_version=3,
        )
    with pytest.raises(ConcurrencyError):
        await ledger.append_redactions(session_id, [redacted], expected_version=2)
    assert (await ledger.state(session_id)).version == 3
