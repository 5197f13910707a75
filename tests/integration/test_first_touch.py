"""The first touch of a huge session shares the event loop: other clients are answered meanwhile.

A ledger opened cold holds nothing of a session; its first append loads the session's head, and
its first whole read folds every thought. Both read the log a page at a time and let the loop's
other tasks run between pages, so a client recording in its own session keeps getting answers
before the touch returns (an order, not a time).
"""

import asyncio

import pytest

from tests.support.factories import started, thought
from thoughtledger import Ledger, open_ledger
from thoughtledger.api.bootstrap import open_store
from thoughtledger.ledger.events import LedgerEvent

pytestmark = pytest.mark.anyio

HUGE = 20_000
"""Thoughts in the huge session: dozens of pages."""
BATCH = 5_000


async def record_huge(url: str) -> None:
    store = await open_store(url)
    try:
        version = 0
        for first in range(1, HUGE + 1, BATCH):
            events: list[LedgerEvent] = [started()] if first == 1 else []
            events += [thought(n, total=HUGE) for n in range(first, first + BATCH)]
            await store.append("huge", events, expected_version=version)
            version += len(events)
    finally:
        await store.aclose()
    # Written through the store alone, the session is behind on its loop marks; a writable
    # opening marks it (folding it whole). Do that now, so that the ledger under test opens cold.
    async with open_ledger(url, ttl=None):
        pass


def step(number: int) -> dict[str, object]:
    return {
        "thought": f"other client, step {number}",
        "thought_number": number,
        "total_thoughts": number,
        "next_thought_needed": True,
    }


async def answered_meanwhile(ledger: Ledger, touch: "asyncio.Task[object]") -> int:
    """Calls another client completes in its own session before ``touch`` returns."""
    answered = 0
    number = 1
    while not touch.done():
        number += 1
        await ledger.think("other", step(number))
        answered += not touch.done()
    await touch
    return answered


async def test_a_first_append_to_a_huge_session_lets_other_clients_record(
    ledger_url: str,
) -> None:
    await record_huge(ledger_url)
    async with open_ledger(ledger_url, ttl=None) as ledger:
        await ledger.think("other", step(1))
        touch = asyncio.create_task(ledger.think("huge", step(HUGE + 1)))
        answered = await answered_meanwhile(ledger, touch)
        assert (await ledger.state("huge")).thought_count == HUGE + 1
    assert answered >= 3


async def test_a_first_whole_read_of_a_huge_session_lets_other_clients_record(
    ledger_url: str,
) -> None:
    await record_huge(ledger_url)
    async with open_ledger(ledger_url, ttl=None) as ledger:
        await ledger.think("other", step(1))
        touch = asyncio.create_task(ledger.state("huge"))
        answered = await answered_meanwhile(ledger, touch)
        assert len((await ledger.state("huge")).thoughts) == HUGE
    assert answered >= 3
