"""Properties of model-written thoughts: they fold exactly like the same thoughts by hand."""

import asyncio
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property.strategies import generations, thinking_call
from tests.support.folding import (
    assert_as_of_is_prefix,
    assert_prefix_then_suffix_is_whole,
    record_calls,
    recorded,
)
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.events import Generation
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.store.sqlite import SqliteEventStore
from thoughtledger.projections.answers import official_view, session_view, status_view
from thoughtledger.projections.entries import ThoughtEntry
from thoughtledger.projections.state import SessionState

authored_calls = st.lists(
    st.tuples(thinking_call(), st.none() | generations),
    min_size=1,
    max_size=10,
)
"""Calls, each written by hand (``None``) or by a model (its generation)."""


def _shape(state: SessionState) -> list[ThoughtEntry]:
    """The thoughts without who wrote them and without where and when they were stored."""
    epoch = datetime(2000, 1, 1, tzinfo=UTC)
    return [
        t._replace(recorded_at=epoch, position=0, guidance=None, generation=None)
        for t in state.thoughts
    ]


@settings(max_examples=40, deadline=None)
@given(authored_calls)
def test_a_generated_thought_folds_like_the_same_thought_written_by_hand(
    sequence: list[tuple[dict[str, Any], Generation | None]],
) -> None:
    async def scenario() -> None:
        mixed, plain = Ledger(MemoryEventStore()), Ledger(MemoryEventStore())
        await record_calls(mixed, sequence)
        await record_calls(plain, [(call, None) for call, _ in sequence])
        authored, hand = await mixed.state("s"), await plain.state("s")
        assert official_view(authored) == official_view(hand)
        assert session_view(authored) == session_view(hand)
        assert status_view(authored, session_id_shown=True) == status_view(
            hand, session_id_shown=True
        )
        assert authored.revisions == hand.revisions
        assert authored.branches == hand.branches
        assert _shape(authored) == _shape(hand)
        assert [t.generation for t in authored.thoughts] == [g for _, g in sequence]
        assert [t.generated for t in authored.thoughts] == [g is not None for _, g in sequence]

    asyncio.run(scenario())


@settings(max_examples=40, deadline=None)
@given(authored_calls, st.data())
def test_as_of_and_prefix_replays_hold_with_generated_thoughts(
    sequence: list[tuple[dict[str, Any], Generation | None]], data: st.DataObject
) -> None:
    async def scenario() -> None:
        ledger, records = await recorded(sequence)
        n = data.draw(st.integers(1, len(records)), label="version")
        assert_prefix_then_suffix_is_whole(records, n)
        await assert_as_of_is_prefix(ledger, records, n)

    asyncio.run(scenario())


@settings(max_examples=15, deadline=None)
@given(authored_calls)
def test_generated_thoughts_read_back_the_same_after_reopening(
    sequence: list[tuple[dict[str, Any], Generation | None]],
) -> None:
    async def scenario(path: Path) -> None:
        store = await SqliteEventStore.open(path)
        ledger = Ledger(store)
        await record_calls(ledger, sequence)
        live = await ledger.state("s")
        await store.aclose()
        reopened = Ledger(await SqliteEventStore.open(path))
        try:
            assert await reopened.state("s") == live
            assert (await reopened.verify("s")).ok
        finally:
            await reopened.aclose()

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(scenario(Path(tmp) / "ledger.db"))
