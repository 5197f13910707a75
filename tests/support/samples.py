"""Sample sessions recorded through the API, and the irregular clock they are recorded with."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from thoughtledger import StoreError, open_ledger
from thoughtledger.ledger.store.base import LedgerStore


class Clock:
    """A clock for recording: starts just before midnight and moves on irregularly per reading."""

    STEPS = (1.5, 7.25, 0.75, 30.0, 2.125)

    def __init__(self, start: datetime = datetime(2024, 5, 1, 23, 59, tzinfo=UTC)) -> None:
        self.now = start
        self.readings = 0

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=self.STEPS[self.readings % len(self.STEPS)])
        self.readings += 1
        return self.now


def thought(number: int, total: int, *, more: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": more,
        **extra,
    }


SAMPLE: list[tuple[str, dict[str, str], list[dict[str, Any]]]] = [
    (
        "s-a",
        {"agent": "planner", "client": "desktop"},
        [
            thought(1, 3),
            thought(2, 3),
            thought(3, 3, is_revision=True, revises_thought=1),
            thought(4, 3, more=False),
        ],
    ),
    (
        "s-b",
        {"agent": "planner", "client": "cursor"},
        [
            thought(1, 4),
            thought(2, 4, branch_from_thought=1, branch_id="x"),
            thought(3, 4, branch_from_thought=1, branch_id="x"),
            thought(2, 4, branch_from_thought=1, branch_id="y"),
        ],
    ),
    ("s-c", {"agent": "coder", "client": "desktop"}, [thought(1, 2)]),
    ("s-d", {}, [thought(1, 3), thought(2, 3), thought(3, 3, more=False)]),
    (
        "s-e",
        {"agent": "coder"},
        [thought(1, 5), thought(2, 2, is_revision=True, revises_thought=1), thought(3, 3)],
    ),
]
"""Sessions with revisions, branches, a raised and a lowered estimate, a clear, two days."""

SAMPLE_IDS = ["s-a", "s-b", "s-c", "s-d", "s-e"]


async def record_sample(url: str, clock: Clock | None = None) -> None:
    """Record :data:`SAMPLE` into the ledger at ``url`` (``s-c`` is cleared afterwards)."""
    async with open_ledger(url, ttl=None, clock=clock or Clock()) as ledger:
        for session_id, metadata, thoughts in SAMPLE:
            session = ledger.session(session_id, metadata=metadata)
            for arguments in thoughts:
                await session.think(**arguments)
        await ledger.clear_session("s-c", reason="done")


async def assert_refuses_writes(store: LedgerStore) -> None:
    """A store opened read-only on the sample refuses an append, writes nothing, and is closed."""
    try:
        events = [record.event for record in await store.read_stream("s-a")]
        with pytest.raises(StoreError, match="opened read-only; nothing was written"):
            await store.append("s-new", events[:1], expected_version=0)
        assert await store.stream_head("s-new") is None
    finally:
        await store.aclose()
