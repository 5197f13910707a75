"""Loops read alike on every backend: a session's repeats, the ledger's counts and the spans.

Detection is a fold over what a store gives back, so each backend must give back the thoughts
(and their redaction) the fold needs: a repeat found in the session's state is the one counted by
``ledger.stats.loops()`` and named by the spans, and a redacted thought leaves every one of them.
"""

import pytest

from thoughtledger.adapters.otel.spans import Conventions, session_spans
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.projections.loops import session_repeats

pytestmark = pytest.mark.anyio

TEXTS = ["Read the log.", "Grep for the error.", "read the LOG", "Read the log!", "Done."]


async def _record(ledger: Ledger) -> None:
    session = ledger.session("loops", metadata={"agent": "planner"})
    for number, text in enumerate(TEXTS, start=1):
        await session.think(
            thought=text,
            thought_number=number,
            total_thoughts=len(TEXTS),
            next_thought_needed=number < len(TEXTS),
        )


async def _spans_repeats(ledger: Ledger) -> list[tuple[int, int]]:
    # The spans name the repeats the ledger's marks hold (an adapter never folds them itself).
    marks = await ledger.loops.marks("loops")
    spans = session_spans(await ledger.events("loops"), Conventions(), marks)
    return [
        (int(str(s.attributes["thoughtledger.event.version"])), int(str(value)))
        for s in spans
        if (value := s.attributes.get("thoughtledger.repeats.version")) is not None
    ]


async def test_every_view_of_loops_reads_the_same_repeats(store: LedgerStore) -> None:
    ledger = Ledger(store)
    await _record(ledger)
    repeats = session_repeats(await ledger.state("loops"))
    # v2 is the first thought (v1 starts the session); #3 and #4 both repeat #1, #4 also #3.
    assert [(r.version, r.repeats_version) for r in repeats] == [(4, 2), (5, 4)]
    assert await _spans_repeats(ledger) == [(4, 2), (5, 4)]
    counted = await ledger.stats.loops()
    assert (counted.sessions, counted.sessions_with_loops, counted.repeats) == (1, 1, 2)
    assert (await ledger.stats.loops(agent="coder")).sessions == 0


async def test_a_redacted_thought_is_neither_a_repeat_nor_repeated(store: LedgerStore) -> None:
    ledger = Ledger(store)
    await _record(ledger)
    await ledger.redaction.redact("loops", thought_number=1, reason="secret", by="auditor")
    repeats = session_repeats(await ledger.state("loops"))
    assert [(r.version, r.repeats_version) for r in repeats] == [(5, 4)]
    assert await _spans_repeats(ledger) == [(5, 4)]
    assert (await ledger.stats.loops()).repeats == 1
