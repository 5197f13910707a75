"""Properties of the projections: live state equals replayed state, folds compose, as-of works."""

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property.strategies import calls, thinking_call
from tests.support.folding import (
    assert_as_of_is_prefix,
    assert_prefix_then_suffix_is_whole,
    record_calls,
    recorded,
)
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.store.sqlite import SqliteEventStore
from thoughtledger.projections.answers import official_view, session_view
from thoughtledger.projections.state import empty, replay


@settings(max_examples=25, deadline=None)
@given(calls)
def test_the_live_view_equals_the_view_rebuilt_after_reopening(
    sequence: list[dict[str, Any]],
) -> None:
    async def scenario(path: Path) -> None:
        store = await SqliteEventStore.open(path)
        live = await record_calls(Ledger(store), sequence)
        await store.aclose()
        reopened = Ledger(await SqliteEventStore.open(path))
        try:
            rebuilt = await reopened.state("s")
        finally:
            await reopened.aclose()
        assert session_view(rebuilt) == session_view(live)
        assert official_view(rebuilt) == official_view(live)
        assert rebuilt == live

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(scenario(Path(tmp) / "ledger.db"))


@settings(max_examples=60, deadline=None)
@given(calls, st.data())
def test_replaying_a_prefix_then_the_suffix_equals_replaying_all(
    sequence: list[dict[str, Any]], data: st.DataObject
) -> None:
    async def scenario() -> None:
        _ledger, records = await recorded(sequence)
        assert_prefix_then_suffix_is_whole(records, data.draw(st.integers(0, len(records))))

    asyncio.run(scenario())


@settings(max_examples=60, deadline=None)
@given(calls, st.data())
def test_as_of_version_n_equals_replaying_the_first_n_events(
    sequence: list[dict[str, Any]], data: st.DataObject
) -> None:
    async def scenario() -> None:
        ledger, records = await recorded(sequence)
        await assert_as_of_is_prefix(ledger, records, data.draw(st.integers(1, len(records))))

    asyncio.run(scenario())


@settings(max_examples=60, deadline=None)
@given(calls, st.data())
def test_a_trimmed_state_answers_the_head_like_the_full_one(
    sequence: list[dict[str, Any]], data: st.DataObject
) -> None:
    from thoughtledger.projections.answers import status_view
    from thoughtledger.projections.state import trim

    async def scenario() -> None:
        _ledger, records = await recorded(sequence)
        keep = data.draw(st.integers(0, 4), label="keep")
        cut = data.draw(st.integers(0, len(records)), label="cut")
        full = replay(records, empty("s"))
        trimmed_then_more = replay(records[cut:], trim(replay(records[:cut], empty("s")), keep))
        assert official_view(trimmed_then_more) == official_view(full)
        assert status_view(trimmed_then_more, session_id_shown=True) == status_view(
            full, session_id_shown=True
        )
        assert (
            trimmed_then_more.thoughts
            == full.thoughts[len(full.thoughts) - len(trimmed_then_more.thoughts) :]
        )
        assert set(trimmed_then_more.branches) == set(full.branches)

    asyncio.run(scenario())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), thinking_call()), min_size=1, max_size=20),
    st.integers(1, 7),
)
def test_rebuilding_from_rows_equals_replaying_decoded_events(
    sequence: list[tuple[str, dict[str, Any]]], page: int
) -> None:
    async def scenario() -> None:
        ledger = Ledger(MemoryEventStore())
        for session_id, call in sequence:
            await ledger.think(session_id, call)
        await ledger.clear_session("b")
        rebuilt = await ledger.rebuild(page=page)
        for session_id, state in rebuilt.items():
            assert state == replay(await ledger.events(session_id), empty(session_id))
        assert set(rebuilt) == {h.session_id for h in await ledger.heads()}

    asyncio.run(scenario())
