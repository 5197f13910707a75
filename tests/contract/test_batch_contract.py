"""Batches on every backend: one append, the answers and state of one call each, or nothing."""

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property.strategies import calls, thinking_call
from tests.support.backends import Backend
from thoughtledger.api import (
    MAX_BATCH_THOUGHTS,
    InvalidBatchError,
    InvalidInputError,
    Ledger,
    Session,
    ThinkOutcome,
)
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.projections.answers import (
    JsonDict,
    minimal_response,
    official_view,
    session_view,
    status_view,
    thought_history,
)
from thoughtledger.projections.state import SessionState

pytestmark = pytest.mark.anyio


def call(number: int, last: int = 3, **marks: Any) -> dict[str, Any]:
    return {
        "thought": f"step {number}",
        "thought_number": number,
        "total_thoughts": last,
        "next_thought_needed": number < last,
        **marks,
    }


def answers(outcome: ThinkOutcome) -> tuple[JsonDict, ...]:
    """Every view a way in answers a thought with, less the session id (two sessions differ)."""
    views = (
        minimal_response(outcome.entry),
        official_view(outcome.state),
        session_view(outcome.state),
        status_view(outcome.state, session_id_shown=False),
    )
    return tuple({k: v for k, v in view.items() if k != "sessionId"} for view in views)


def facts(events: list[RecordedEvent]) -> list[tuple[int, str, dict[str, Any]]]:
    """What the log holds of a session, less what differs between two sessions (ids, times)."""
    return [(e.version, e.event_type, e.event.model_dump()) for e in events]


def history(state: SessionState) -> list[JsonDict]:
    """Every thought with all its fields, less when it was recorded."""
    return [{k: v for k, v in item.items() if k != "recordedAt"} for item in thought_history(state)]


async def every_head(ledger: Ledger) -> list[tuple[str, int]]:
    # Heads, not the whole log: on PostgreSQL a read of the whole log may lag other work.
    return [(head.session_id, head.version) for head in await ledger.all_heads()]


async def one_call_each(session: Session, thoughts: list[dict[str, Any]]) -> list[ThinkOutcome]:
    return [await session.think(**thought) for thought in thoughts]


@settings(
    max_examples=25,
    deadline=None,
    # One store serves every example (PostgreSQL schemas are costly): each uses sessions of its own.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(before=st.lists(thinking_call(), max_size=6), batch=calls)
async def test_a_batch_answers_and_records_exactly_what_one_call_each_would(
    store: LedgerStore, before: list[dict[str, Any]], batch: list[dict[str, Any]]
) -> None:
    ledger = Ledger(store, ttl=None)
    appends: list[int] = []
    prefix = uuid.uuid4().hex[:12]
    single = ledger.session(f"{prefix}-single")
    batched = ledger.session(f"{prefix}-batched")
    for session in (single, batched):
        await one_call_each(session, before)
    ledger.observe(lambda events: appends.append(len(events)))

    expected = await one_call_each(single, batch)
    appends.clear()
    got = await batched.think_batch(batch)

    assert len(appends) == 1  # one append: one store transaction
    assert appends[0] == sum(len(o.recorded) for o in got)
    assert [answers(o) for o in got] == [answers(o) for o in expected]
    assert [facts(o.recorded) for o in got] == [facts(o.recorded) for o in expected]
    assert {o.session_id for o in got} == {batched.id}
    assert history(await batched.state()) == history(await single.state())
    assert facts(await batched.events()) == facts(await single.events())
    # A fresh ledger folds the log to the same session.
    reread = Ledger(store, ttl=None)
    assert history(await reread.state(batched.id)) == history(await single.state())
    assert (await ledger.verify(batched.id)).ok


async def test_process_batch_answers_the_minimal_response_of_each_thought(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    session = await ledger.new_session()
    got = await session.process_batch(
        [call(1), call(2, branch_from_thought=1, branch_id="alt"), call(3, is_revision=None)]
    )
    assert got == [
        {"thought": "step 1", "thoughtNumber": 1, "totalThoughts": 3, "nextThoughtNeeded": True},
        {"thought": "step 2", "thoughtNumber": 2, "totalThoughts": 3, "nextThoughtNeeded": True},
        {"thought": "step 3", "thoughtNumber": 3, "totalThoughts": 3, "nextThoughtNeeded": False},
    ]
    state = await session.state()
    assert state.version == 4
    assert list(state.branches) == ["alt"]


async def test_a_bad_thought_refuses_the_whole_batch_naming_its_index_and_field(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    session = await ledger.new_session()
    await session.process_batch([call(1)])
    before = await every_head(ledger)
    bad = [call(2), call(3), {**call(4), "thought_number": 0}, call(5)]
    with pytest.raises(InvalidBatchError) as refused:
        await session.process_batch(bad)
    assert refused.value.index == 2
    assert "thoughts[2]" in str(refused.value)
    assert "thought_number" in str(refused.value)
    assert "nothing of the batch was recorded" in str(refused.value)
    for wrong, field in (
        ({**call(2), "colour": "red"}, "colour"),
        ({**call(2), "thought": ""}, "thought"),
        ({**call(2), "next_thought_needed": "yes"}, "next_thought_needed"),
    ):
        with pytest.raises(InvalidBatchError, match=rf"thoughts\[1\]: .*{field}"):
            await session.process_batch([call(2), wrong])
    with pytest.raises(InvalidBatchError, match=r"thoughts\[0\]: .*mapping"):
        await session.process_batch(["step 2"])  # type: ignore[list-item]  # what is refused
    assert await every_head(ledger) == before  # no event anywhere, no session started
    assert (await session.state()).version == 2


async def test_a_batch_is_bounded(store: LedgerStore) -> None:
    ledger = Ledger(store)
    session = await ledger.new_session()
    with pytest.raises(InvalidInputError, match="1 to 1000 thoughts, got 0"):
        await session.process_batch([])
    too_many = [call(n, MAX_BATCH_THOUGHTS + 1) for n in range(1, MAX_BATCH_THOUGHTS + 2)]
    with pytest.raises(InvalidInputError, match=f"got {MAX_BATCH_THOUGHTS + 1}"):
        await session.process_batch(too_many)
    most = await session.process_batch(too_many[:MAX_BATCH_THOUGHTS])
    assert len(most) == MAX_BATCH_THOUGHTS
    assert (await session.state()).thought_count == MAX_BATCH_THOUGHTS
    assert len(await session.events()) == MAX_BATCH_THOUGHTS + 1


async def test_a_batch_on_an_expired_session_starts_a_new_one_as_its_first_thought_would(
    store: LedgerStore,
) -> None:
    now = [datetime(2030, 1, 1, tzinfo=UTC)]
    ledger = Ledger(store, ttl=timedelta(minutes=5), clock=lambda: now[0])
    old = await ledger.new_session()
    await old.process_batch([call(1, 5), call(2, 5)])
    old_id = old.id
    now[0] += timedelta(hours=1)
    got = await old.think_batch([call(3, 5), call(4, 5)])
    assert got[0].replaced_session_id == old_id
    assert got[1].replaced_session_id is None
    assert old.id == got[0].session_id == got[1].session_id != old_id
    assert [e.event_type for e in got[0].recorded] == [
        "session.expired",
        "session.started",
        "thought.recorded",
    ]
    assert (await ledger.state(old_id)).ended == "expired"
    new = await ledger.state(old.id)
    assert new.predecessor_id == old_id
    assert [t.thought_number for t in new.thoughts] == [3, 4]


async def test_with_one_session_per_run_a_later_new_run_refuses_the_batch(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    first = await ledger.batches.think(None, [call(1), call(2)], new_run=True)
    session_id = first[-1].session_id
    with pytest.raises(InvalidBatchError, match=r"thoughts\[1\]: starts a new run") as refused:
        await ledger.batches.think(session_id, [call(3), call(1), call(1)], new_run=True)
    assert refused.value.index == 1
    assert (await ledger.state(session_id)).version == 3
    # A batch whose first thought starts a run goes to a new session that records the old one.
    again = await ledger.batches.think(session_id, [call(1), call(2)], new_run=True)
    assert again[0].replaced_session_id == session_id
    assert (await ledger.state(again[0].session_id)).thought_count == 2


async def test_two_writers_batches_on_one_session_never_interleave(
    backend: Backend, store: LedgerStore
) -> None:
    # Two ledgers, as two processes would be (each with its own view of the session's head).
    other_store = await backend.open() if backend.durable else store
    first, second = Ledger(store), Ledger(other_store)
    try:
        session_id = f"shared-{uuid.uuid4().hex[:8]}"
        await first.session(session_id).process_batch([call(1, 41)])
        await second.state(session_id)  # both now hold the session at version 2

        def batch(name: str) -> list[dict[str, Any]]:
            return [{**call(n, 41), "thought": f"{name} {n}"} for n in range(2, 22)]

        await asyncio.gather(
            first.session(session_id).process_batch(batch("a")),
            second.session(session_id).process_batch(batch("b")),
        )
        texts = [t.thought for t in (await first.state(session_id)).thoughts]
        assert len(texts) == 41
        writers = [text.split()[0] for text in texts[1:]]
        # Each batch is one append: its thoughts are together, whichever came first.
        assert writers in (["a"] * 20 + ["b"] * 20, ["b"] * 20 + ["a"] * 20)
        assert (await first.verify(session_id)).ok
    finally:
        if other_store is not store:
            await other_store.aclose()
