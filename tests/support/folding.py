"""Sessions recorded from generated calls, and the fold laws the property tests check on them."""

from collections.abc import Sequence
from typing import Any

from thoughtledger.api.service import Ledger
from thoughtledger.ledger.decide import Generated
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import Generation
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.projections.state import SessionState, empty, replay

Call = dict[str, Any]
Authored = tuple[Call, Generation | None]
"""A call written by hand (``None``) or by a model (its generation)."""


async def record_calls(ledger: Ledger, sequence: Sequence[Call | Authored]) -> SessionState:
    """Record every call in session ``"s"``; return the state after the last one."""
    state: SessionState | None = None
    for item in sequence:
        call, generation = item if isinstance(item, tuple) else (item, None)
        generated = None if generation is None else Generated("guidance", generation)
        state = (await ledger.think("s", call, generated=generated)).state
    assert state is not None
    return state


async def recorded(sequence: Sequence[Call | Authored]) -> tuple[Ledger, list[RecordedEvent]]:
    """A ledger in memory holding session ``"s"`` recorded from ``sequence``, and its events."""
    ledger = Ledger(MemoryEventStore())
    await record_calls(ledger, sequence)
    return ledger, await ledger.events("s")


def assert_prefix_then_suffix_is_whole(records: list[RecordedEvent], cut: int) -> None:
    """Folding the first ``cut`` events, then the rest onto that, is folding them all."""
    whole = replay(records, empty("s"))
    assert replay(records[cut:], replay(records[:cut], empty("s"))) == whole


async def assert_as_of_is_prefix(ledger: Ledger, records: list[RecordedEvent], n: int) -> None:
    """The state as of version ``n`` is the fold of the first ``n`` events."""
    assert await ledger.state("s", as_of_version=n) == replay(records[:n], empty("s"))
