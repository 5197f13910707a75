"""The async facade, on every backend: the official server's scenarios, the minimal-response spec
and the session pattern."""

import asyncio
import gc
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.raw_store import raw_store
from thoughtledger import InvalidThoughtError, Ledger, SessionNotFoundError
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ledger(store: LedgerStore) -> Ledger:
    return Ledger(store)


def args(number: int, total: int = 3, *, more: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": more,
        **extra,
    }


async def official(ledger: Ledger, session_id: str) -> dict[str, Any]:
    return await ledger.session(session_id).view("official")


# -- the official server's scenarios ---------------------------------------------------------------


async def test_one_thought_is_recorded(ledger: Ledger) -> None:
    outcome = await ledger.think("s", args(1))
    assert await official(ledger, outcome.session_id) == {
        "thoughtNumber": 1,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
        "branches": [],
        "thoughtHistoryLength": 1,
    }


async def test_a_revision_on_an_empty_session_is_accepted(ledger: Ledger) -> None:
    await ledger.think("s", args(2, is_revision=True, revises_thought=1))
    view = await official(ledger, "s")
    assert view["thoughtHistoryLength"] == 1
    assert (await ledger.state("s")).thoughts[0].kind == "thought.revised"


async def test_three_thoughts_make_a_history_of_three(ledger: Ledger) -> None:
    for n in (1, 2, 3):
        await ledger.think("s", args(n))
    assert (await official(ledger, "s"))["thoughtHistoryLength"] == 3


async def test_a_thought_number_above_the_estimate_raises_the_estimate(ledger: Ledger) -> None:
    outcome = await ledger.think("s", args(5, 3))
    assert outcome.entry.total_thoughts == 5
    assert (await official(ledger, "s"))["totalThoughts"] == 5
    assert outcome.recorded[-1].event.requested_total_thoughts == 3  # type: ignore[union-attr]


async def test_two_branches_from_one_thought_are_both_listed(ledger: Ledger) -> None:
    await ledger.think("s", args(1))
    await ledger.think("s", args(2, branch_from_thought=1, branch_id="left"))
    await ledger.think("s", args(2, branch_from_thought=1, branch_id="right"))
    view = await official(ledger, "s")
    assert view["branches"] == ["left", "right"]
    assert view["thoughtHistoryLength"] == 3


async def test_two_thoughts_in_one_branch_list_it_once(ledger: Ledger) -> None:
    await ledger.think("s", args(1))
    first = await ledger.think("s", args(2, branch_from_thought=1, branch_id="b"))
    second = await ledger.think("s", args(3, branch_from_thought=1, branch_id="b"))
    assert (await official(ledger, "s"))["branches"] == ["b"]
    assert [first.entry.kind, second.entry.kind] == ["branch.opened", "branch.extended"]
    branches = await ledger.session("s").branches()
    assert [t["thoughtNumber"] for t in branches[0]["thoughts"]] == [2, 3]


async def test_a_branch_needs_both_its_origin_and_its_id(ledger: Ledger) -> None:
    await ledger.think("s", args(1, branch_from_thought=1))
    await ledger.think("s", args(2, branch_id="lonely"))
    assert (await official(ledger, "s"))["branches"] == []


async def test_a_ten_thousand_character_thought_round_trips(ledger: Ledger) -> None:
    text = "long " * 2000
    await ledger.think("s", {**args(1), "thought": text})
    assert (await ledger.state("s")).thoughts[0].thought == text


async def test_one_of_one_completes(ledger: Ledger) -> None:
    outcome = await ledger.think("s", args(1, 1, more=False))
    assert outcome.entry.status == "complete"
    assert (await official(ledger, "s"))["nextThoughtNeeded"] is False


# -- the minimal-response spec: the minimal response -----------------------------------------------


async def test_the_minimal_response_has_exactly_four_keys_for_every_kind(ledger: Ledger) -> None:
    session = await ledger.new_session()
    answers = [
        await session.process_sequential_thinking("first", 1, 3, True),
        await session.process_sequential_thinking(
            "revised", 2, 3, True, is_revision=True, revises_thought=1
        ),
        await session.process_sequential_thinking(
            "branched", 3, 3, False, branch_from_thought=1, branch_id="alt"
        ),
    ]
    assert answers[1] == {
        "thought": "revised",
        "thoughtNumber": 2,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
    }
    assert all(
        set(a) == {"thought", "thoughtNumber", "totalThoughts", "nextThoughtNeeded"}
        for a in answers
    )
    kinds = [r.event_type for r in await session.events()]
    assert kinds == ["session.started", "thought.recorded", "thought.revised", "branch.opened"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("thought_number", 0, "greater than or equal to 1"),
        ("total_thoughts", -3, "greater than or equal to 1"),
        ("thought_number", 1.5, "valid integer"),
        ("thought_number", "3", "valid integer"),
        ("next_thought_needed", "yes", "valid boolean"),
        ("thought", "", "must not be empty"),
        ("thought", "lone \ud800 surrogate", "surrogate"),
        ("revises_thought", 0, "greater than or equal to 1"),
    ],
)
async def test_invalid_input_raises_a_value_error_and_appends_nothing(
    ledger: Ledger, field: str, value: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        await ledger.think("s", {**args(1), field: value})
    assert isinstance(caught.value, InvalidThoughtError)
    assert await raw_store(ledger).read_all() == []


async def test_unknown_and_missing_fields_are_named(ledger: Ledger) -> None:
    with pytest.raises(InvalidThoughtError, match="surprise: unknown field"):
        await ledger.think("s", {**args(1), "surprise": 1})
    with pytest.raises(InvalidThoughtError, match="next_thought_needed: Field required"):
        await ledger.think("s", {"thought": "x", "thought_number": 1, "total_thoughts": 1})


async def test_an_oversize_thought_is_refused_with_its_size(store: LedgerStore) -> None:
    ledger = Ledger(store, max_thought_bytes=1000)
    with pytest.raises(InvalidThoughtError, match="over the limit of 1000 bytes"):
        await ledger.think("s", {**args(1), "thought": "é" * 600})
    assert await store.read_all() == []


# -- the session pattern: sessions -----------------------------------------------------------------


async def test_a_new_session_gets_a_uuid7_and_continues_by_id(ledger: Ledger) -> None:
    session = await ledger.new_session()
    assert session.id[14] == "7"  # the version nibble of a UUIDv7
    await session.process_sequential_thinking("First", 1, 3, True)
    same = ledger.session(session.id)
    await same.process_sequential_thinking("Second", 2, 3, False)
    view = await same.view()
    assert view["sessionId"] == session.id
    assert view["thoughtHistoryLength"] == 2
    assert (
        view["summary"] == "Sequential thinking complete: 2 thoughts processed across 0 branches."
    )


async def test_a_revision_is_flagged_in_the_history(ledger: Ledger) -> None:
    session = await ledger.new_session()
    await session.process_sequential_thinking("Initial assumption", 1, 3, True)
    await session.process_sequential_thinking(
        "Revised: the assumption was wrong", 2, 3, False, is_revision=True, revises_thought=1
    )
    history = (await session.view())["thoughtHistory"]
    assert history[1] == {
        "thoughtNumber": 2,
        "thought": "Revised: the assumption was wrong",
        "isRevision": True,
        "revisesThought": 1,
    }


async def test_clearing_starts_afresh_under_a_new_id_and_keeps_the_audit_trail(
    ledger: Ledger,
) -> None:
    first = await ledger.think(None, args(1))
    cleared = await ledger.think(first.session_id, args(1, 5), clear=True)
    assert cleared.session_id != first.session_id
    assert cleared.replaced_session_id == first.session_id
    assert len(cleared.state.thoughts) == 1
    old = await ledger.events(first.session_id)
    assert [r.event_type for r in old][-1] == "session.cleared"
    assert (await ledger.state(cleared.session_id)).predecessor_id == first.session_id


async def test_a_thought_for_a_cleared_session_lands_in_a_new_one(ledger: Ledger) -> None:
    await ledger.think("s", args(1))
    assert await ledger.clear_session("s") is True
    assert await ledger.clear_session("s") is False
    again = await ledger.think("s", args(2))
    assert again.session_id != "s"
    assert await ledger.head("s") is not None
    assert (await ledger.state("s")).status == "cleared"


async def test_clear_all_and_list_sessions(ledger: Ledger) -> None:
    for name in ("a", "b", "c"):
        await ledger.think(name, args(1))
    assert [s.session_id for s in await ledger.list_sessions()] == ["a", "b", "c"]
    assert await ledger.clear_all_sessions() == 3
    assert {s.status for s in await ledger.list_sessions()} == {"cleared"}


async def test_reading_an_idle_session_appends_nothing(store: LedgerStore) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    ledger = Ledger(store, ttl=timedelta(minutes=30), clock=lambda: now[0])
    first = await ledger.think("s", args(1))
    assert first.state.updated_at is not None
    now[0] = first.state.updated_at + timedelta(minutes=31)
    before = await ledger.head("s")
    await ledger.state("s")
    await ledger.history("s")
    await ledger.as_principal(None).state("s")
    assert await ledger.head("s") == before


async def test_an_idle_session_expires_as_an_event_when_expired_explicitly(
    store: LedgerStore,
) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    ledger = Ledger(store, ttl=timedelta(minutes=30), clock=lambda: now[0])
    first = await ledger.think("s", args(1))
    assert first.state.updated_at is not None
    now[0] = first.state.updated_at + timedelta(minutes=31)
    assert await ledger.expire_idle("s")
    state = await ledger.state("s")
    assert state.status == "expired"
    expired = (await ledger.events("s"))[-1].event
    assert expired.type == "session.expired"
    later = await ledger.think("s", args(2))
    assert later.session_id != "s"


async def test_unknown_sessions_raise_lookup_errors(ledger: Ledger) -> None:
    assert await ledger.head("nobody") is None
    with pytest.raises(SessionNotFoundError):
        await ledger.state("nobody")
    with pytest.raises(LookupError):
        await ledger.session("nobody").view()


# -- time travel -----------------------------------------------------------------------------------


async def test_a_session_can_be_read_as_of_any_version(ledger: Ledger) -> None:
    for n in (1, 2, 3, 4):
        await ledger.think("s", args(n, 4, more=n < 4))
    # version 1 is session.started; thought n is version n + 1
    early = await ledger.session("s").view("official", as_of_version=3)
    assert early["thoughtNumber"] == 2
    assert early["thoughtHistoryLength"] == 2
    with pytest.raises(InvalidInputError, match="past its end"):
        await ledger.state("s", as_of_version=99)


async def test_a_session_can_be_read_as_of_a_time(store: LedgerStore) -> None:
    now = [datetime(2026, 1, 1, 14, 0, tzinfo=UTC)]
    ledger = Ledger(store, clock=lambda: now[0])
    store._clock = lambda: now[0]
    await ledger.think("s", args(1))
    now[0] = datetime(2026, 1, 1, 14, 5, tzinfo=UTC)
    await ledger.think("s", args(2))
    at_1402 = await ledger.state("s", as_of_time=datetime(2026, 1, 1, 14, 2, tzinfo=UTC))
    assert [t.thought_number for t in at_1402.thoughts] == [1]
    with pytest.raises(SessionNotFoundError):
        await ledger.state("s", as_of_time=datetime(2025, 1, 1, tzinfo=UTC))


async def test_replay_steps_through_every_event_with_the_view_after_it(ledger: Ledger) -> None:
    for n in (1, 2, 3):
        await ledger.think("s", args(n))
    steps = [(record.version, len(state.thoughts)) async for record, state in ledger.replay("s")]
    assert steps == [(1, 0), (2, 1), (3, 2), (4, 3)]


async def test_the_history_window_keeps_the_last_thoughts_but_counts_all(ledger: Ledger) -> None:
    for n in range(1, 8):
        await ledger.think("s", args(n, 7))
    view = await ledger.session("s").view(history_window=2)
    assert [t["thoughtNumber"] for t in view["thoughtHistory"]] == [6, 7]
    assert view["thoughtHistoryLength"] == 7


async def test_a_long_session_keeps_only_its_latest_thoughts_in_memory(store: LedgerStore) -> None:
    ledger = Ledger(store, hold_thoughts=5, cache_thoughts=8)
    for n in range(1, 13):
        outcome = await ledger.think("long", args(n, 12, more=n < 12))
    # The hot path holds the latest five to ten: past ten it trims back to five.
    assert [t.thought_number for t in outcome.state.thoughts] == list(range(7, 13))
    assert outcome.state.thought_count == 12
    assert (await official(ledger, "long"))["thoughtHistoryLength"] == 12
    full = await ledger.state("long")
    assert full.complete
    assert [t.thought_number for t in full.thoughts] == list(range(1, 13))
    early = await ledger.state("long", as_of_version=4)
    assert [t.thought_number for t in early.thoughts] == [1, 2, 3]
    await ledger.think("other", args(1))
    await ledger.think("third", args(1))
    assert sum(len(s.thoughts) for s in ledger._held.heads.values()) <= 10


async def test_rebuild_returns_every_session_as_replayed(ledger: Ledger) -> None:
    for name in ("a", "b"):
        for n in (1, 2, 3):
            await ledger.think(
                name, args(n, branch_from_thought=1, branch_id="x") if n == 3 else args(n)
            )
    await ledger.clear_session("a")
    rebuilt = await ledger.rebuild(page=2)
    assert set(rebuilt) == {"a", "b"}
    assert rebuilt["a"] == await ledger.state("a")
    assert rebuilt["b"] == await ledger.state("b")
    assert list(rebuilt["b"].branches) == ["x"]


async def test_rebuild_leaves_garbage_collection_as_it_found_it(ledger: Ledger) -> None:
    await ledger.think("a", args(1))
    assert gc.isenabled()
    await asyncio.gather(ledger.rebuild(page=1), ledger.rebuild(page=1))
    assert gc.isenabled()
    gc.disable()
    try:
        await ledger.rebuild()
        assert not gc.isenabled()
    finally:
        gc.enable()


async def test_rebuild_reads_thought_numbers_beyond_64_bits(ledger: Ledger) -> None:
    huge = 2**70
    await ledger.think("big", args(huge, huge + 1))
    rebuilt = await ledger.rebuild()
    assert rebuilt["big"] == await ledger.state("big")
    assert rebuilt["big"].thoughts[0].thought_number == huge
