"""The subscription contract: every event after a position, then live, on every backend."""

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.backends import Backend
from tests.support.factories import thought
from tests.support.subscribing import (
    append_thoughts,
    appending_process,
    eventually,
    finished,
    listening_connections,
    open_named,
    stored,
    take,
    take_through,
    whole_log,
)
from thoughtledger.api.bootstrap import open_store
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError, StoreError
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio


async def test_a_subscription_yields_the_stored_events_then_each_new_one(
    store: LedgerStore,
) -> None:
    await append_thoughts(store, "a", 3)
    events = store.subscribe()
    first = await take(events, 3)
    assert [(r.session_id, r.version) for r in first] == [("a", 1), ("a", 2), ("a", 3)]
    waiting = asyncio.ensure_future(take(events, 2))
    await append_thoughts(store, "b", 2)
    live = await waiting
    assert [(r.session_id, r.version) for r in live] == [("b", 1), ("b", 2)]
    assert [r.position for r in first + live] == [r.position for r in await whole_log(store)]


async def test_a_subscription_starts_just_after_the_position_it_is_given(
    store: LedgerStore,
) -> None:
    await append_thoughts(store, "a", 6)
    log = await stored(store, "a")
    middle = log[2].position
    resumed = await take(store.subscribe(after=middle), 3)
    assert resumed == log[3:]
    # A position between two stored ones (PostgreSQL's are not dense) starts at the next one.
    resumed = await take(store.subscribe(after=log[-1].position - 1), 1)
    assert resumed == log[-1:]


async def test_catch_up_meets_live_without_gap_or_duplicate_while_another_store_appends(
    backend: Backend, store: LedgerStore
) -> None:
    writer = await backend.open()  # the same storage through another store: another process
    try:
        await append_thoughts(writer, "early", 40)
        early = await stored(store, "early")
        # Subscribers start at the beginning and in the middle while three writers append.
        subscribers = [store.subscribe(), store.subscribe(after=early[19].position)]
        writing = asyncio.gather(*(append_thoughts(writer, f"w{n}", 30) for n in range(3)))
        firsts = [await take(events, 5) for events in subscribers]
        await writing
        log = await stored(store, "early", "w0", "w1", "w2")
        for start, events, first in zip((0, early[19].position), subscribers, firsts, strict=True):
            rest = await take_through(events, log[-1].position)
            expected = [r for r in log if r.position > start]
            assert [r.position for r in first + rest] == [r.position for r in expected]
            assert first + rest == expected
    finally:
        if writer is not store:
            await writer.aclose()


async def test_a_subscription_follows_the_appends_of_another_os_process(
    backend: Backend, store: LedgerStore
) -> None:
    if backend.url is None:
        pytest.skip("a memory ledger lives in one process")
    await append_thoughts(store, "here", 5)
    events = store.subscribe(after=0)
    here = await take(events, 5)
    with appending_process(backend.url, "there", 60) as process:
        there = await take(events, 60)
        await finished(process)
    assert [(r.session_id, r.version) for r in there] == [("there", n) for n in range(1, 61)]
    assert here + there == await whole_log(store)


async def test_a_read_only_store_follows_the_appends_of_a_writing_one(
    backend: Backend, store: LedgerStore
) -> None:
    if backend.url is None:
        pytest.skip("a memory ledger cannot be opened a second time, read-only")
    await append_thoughts(store, "a", 1)
    reader = await open_store(backend.url, read_only=True)
    try:
        events = reader.subscribe()
        assert len(await take(events, 1)) == 1
        waiting = asyncio.ensure_future(take(events, 2))
        await append_thoughts(store, "a", 2, start=1)
        assert [r.version for r in await waiting] == [2, 3]
    finally:
        await reader.aclose()


async def test_a_session_filter_yields_only_that_sessions_events_after_the_position(
    store: LedgerStore,
) -> None:
    await append_thoughts(store, "a", 2)
    await append_thoughts(store, "b", 2)
    await append_thoughts(store, "a", 2, start=2)
    log = await stored(store, "a", "b")
    after = log[2].position  # b's first event: a's first two are before it
    events = store.subscribe(after=after, session_id="a")
    caught_up = await take(events, 2)
    assert [(r.session_id, r.version) for r in caught_up] == [("a", 3), ("a", 4)]
    waiting = asyncio.ensure_future(take(events, 1))
    await append_thoughts(store, "b", 1, start=2)
    await append_thoughts(store, "a", 1, start=4)
    assert [(r.session_id, r.version) for r in await waiting] == [("a", 5)]
    # From the beginning, and for a session that does not exist yet.
    assert [r.version for r in await take(store.subscribe(session_id="a"), 5)] == [1, 2, 3, 4, 5]
    later = store.subscribe(session_id="c")
    waiting = asyncio.ensure_future(take(later, 1))
    await append_thoughts(store, "c", 1)
    assert [(r.session_id, r.version) for r in await waiting] == [("c", 1)]


async def test_imported_events_are_delivered_to_subscribers(store: LedgerStore) -> None:
    source = MemoryEventStore()
    await append_thoughts(source, "imported", 3)
    events = store.subscribe()
    waiting = asyncio.ensure_future(take(events, 3))
    await asyncio.sleep(0)
    assert await store.imports.import_records(await stored(source, "imported")) == 3
    assert [(r.session_id, r.version) for r in await waiting] == [
        ("imported", n) for n in (1, 2, 3)
    ]


async def test_bad_subscription_arguments_are_refused_at_the_call(store: LedgerStore) -> None:
    for bad in (
        {"after": -1},
        {"after": "5"},
        {"after": True},
        {"session_id": "not a valid id!"},
        {"poll_interval": 0},
        {"poll_interval": float("nan")},
        {"page": 0},
    ):
        with pytest.raises(InvalidInputError):
            store.subscribe(**bad)
    assert await store.read_all() == []


async def test_closing_the_store_ends_its_subscriptions(backend: Backend) -> None:
    store = await backend.open()
    await append_thoughts(store, "a", 1)
    events = store.subscribe()
    assert len(await take(events, 1)) == 1
    waiting = asyncio.ensure_future(take(events, 5))
    await _turns()
    await store.aclose()
    assert await waiting == []
    with pytest.raises(StoreError, match="closed"):
        store.subscribe()


async def _turns() -> None:
    """Let the loop run other tasks for a few turns (a subscriber reaches its wait)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_leaving_a_subscription_releases_what_it_holds(backend: Backend) -> None:
    name = f"tl_sub_{uuid.uuid4().hex[:10]}"
    store = await open_named(backend, name) if backend.name == "postgres" else await backend.open()

    async def listening() -> int:
        return await listening_connections(name) if backend.name == "postgres" else 0

    try:
        await append_thoughts(store, "a", 2)
        # Two subscriptions share one listener; breaking out of one keeps it for the other.
        kept = store.subscribe()
        await take(kept, 2)
        left = store.subscribe()
        await take(left, 2)
        if backend.name == "postgres":
            assert await listening() == 1
        await left.aclose()  # type: ignore[attr-defined]  # an async generator underneath
        if backend.name == "postgres":
            assert await listening() == 1  # still held for the other one
        # Cancelling the task of the other releases the rest.
        task = asyncio.ensure_future(take(kept, 1))
        await _turns()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await kept.aclose()  # type: ignore[attr-defined]
        await eventually(lambda: _none_listening(listening))
        # The store still works, and a new subscription listens again.
        again = store.subscribe(after=0)
        assert len(await take(again, 2)) == 2
        await again.aclose()  # type: ignore[attr-defined]
    finally:
        await store.aclose()
    await eventually(lambda: _none_listening(listening))


async def _none_listening(listening: Callable[[], Awaitable[int]]) -> bool:
    return await listening() == 0


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 2), st.integers(1, 3)),
        st.tuples(st.just("subscribe"), st.integers(0, 8), st.integers(0, 0)),
        st.tuples(st.just("turn"), st.integers(1, 5), st.integers(0, 0)),
    ),
    min_size=1,
    max_size=25,
)


@settings(
    max_examples=20,
    deadline=None,
    # One store serves every example (PostgreSQL schemas are costly to make): each example
    # checks only positions after its own start, so what earlier examples wrote is harmless.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=_OPS)
async def test_each_subscriber_sees_exactly_the_events_after_its_start_in_order(
    store: LedgerStore, ops: list[tuple[str, int, int]]
) -> None:
    prefix = uuid.uuid4().hex[:8]
    versions = [0, 0, 0]
    positions = [r.position for r in await whole_log(store)]  # earlier examples' events
    sinks: list[tuple[int, list[RecordedEvent]]] = []
    tasks: list[asyncio.Future[None]] = []

    async def follow(after: int, sink: list[RecordedEvent]) -> None:
        async for record in store.subscribe(after=after):
            sink.append(record)

    for kind, first, second in ops:
        if kind == "append":
            events = [thought(versions[first] + n + 1) for n in range(second)]
            recorded = await store.append(
                f"{prefix}-{first}", events, expected_version=versions[first]
            )
            versions[first] += second
            positions += [r.position for r in recorded]
        elif kind == "subscribe":
            after = positions[-1 - first] if len(positions) > first else 0
            sink: list[RecordedEvent] = []
            sinks.append((after, sink))
            tasks.append(asyncio.ensure_future(follow(after, sink)))
        else:
            for _ in range(first):
                await asyncio.sleep(0)
    try:
        last = positions[-1] if positions else 0
        for after, sink in sinks:
            await eventually(lambda after=after, sink=sink: _reached(after, sink, last))  # type: ignore[misc]
        everything = await whole_log(store)
        for after, sink in sinks:
            assert sink == [r for r in everything if r.position > after]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _reached(after: int, sink: list[RecordedEvent], position: int) -> bool:
    return (sink[-1].position if sink else after) >= position
