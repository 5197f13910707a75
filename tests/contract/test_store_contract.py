"""The store contract: every backend must pass every test here unchanged."""

import asyncio
import itertools
import uuid

import pytest

from tests.support.backends import Backend
from tests.support.factories import started, thought
from thoughtledger.ledger.chain import StoredRow
from thoughtledger.ledger.envelope import EventRow, format_time
from thoughtledger.ledger.errors import ConcurrencyError, InvalidInputError, LedgerError
from thoughtledger.ledger.events import (
    BranchOpened,
    LedgerEvent,
    SessionCleared,
    ThoughtRecorded,
    ThoughtRevised,
)
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio


async def test_an_empty_append_is_a_no_op(store: LedgerStore) -> None:
    assert await store.append("s1", [], expected_version=0) == []
    assert await store.read_stream("s1") == []
    assert await store.stream_head("s1") is None


async def test_versions_count_from_one_without_gaps_and_positions_grow(store: LedgerStore) -> None:
    first = await store.append("s1", [started(), thought(1)], expected_version=0)
    second = await store.append("s1", [thought(2), thought(3)], expected_version=2)
    recorded = first + second
    assert [r.version for r in recorded] == [1, 2, 3, 4]
    positions = [r.position for r in recorded]
    assert positions == sorted(positions)
    assert len(set(positions)) == 4
    assert [r.event for r in await store.read_stream("s1")] == [r.event for r in recorded]
    head = await store.stream_head("s1")
    assert head is not None
    assert (head.version, head.hash) == (4, recorded[-1].hash)


async def test_read_stream_returns_the_requested_version_window(store: LedgerStore) -> None:
    await store.append("s1", [thought(n) for n in range(1, 11)], expected_version=0)
    window = await store.read_stream("s1", after_version=3, to_version=6)
    assert [r.version for r in window] == [4, 5, 6]
    assert [r.version for r in await store.read_stream("s1", after_version=8)] == [9, 10]
    assert await store.read_stream("s1", after_version=10) == []


async def test_read_stream_pages_a_session_by_version_with_a_limit(store: LedgerStore) -> None:
    await store.append("s1", [thought(n) for n in range(1, 11)], expected_version=0)
    await store.append("other", [thought(1)], expected_version=0)
    pages: list[list[int]] = []
    after = 0
    while page := await store.read_stream("s1", after_version=after, limit=3):
        pages.append([r.version for r in page])
        after = page[-1].version
    assert pages == [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10]]
    window = await store.read_stream("s1", after_version=2, to_version=7, limit=4)
    assert [r.version for r in window] == [3, 4, 5, 6]
    assert [r.version for r in await store.read_stream("s1", to_version=2, limit=5)] == [1, 2]
    assert await store.read_stream("nobody", limit=5) == []


@pytest.mark.parametrize("limit", [0, -1, True, 2.5])
async def test_read_stream_refuses_a_limit_below_one(store: LedgerStore, limit: object) -> None:
    await store.append("s1", [thought(1)], expected_version=0)
    with pytest.raises(InvalidInputError, match="limit must be an integer >= 1"):
        await store.read_stream("s1", limit=limit)  # type: ignore[arg-type]  # bad on purpose


async def test_a_stale_expected_version_raises_and_writes_nothing(store: LedgerStore) -> None:
    await store.append("s1", [thought(1)], expected_version=0)
    with pytest.raises(ConcurrencyError) as caught:
        await store.append("s1", [thought(2), thought(3)], expected_version=0)
    assert caught.value.actual_version == 1
    with pytest.raises(ConcurrencyError):
        await store.append("s1", [thought(2)], expected_version=5)
    assert [r.version for r in await store.read_stream("s1")] == [1]


async def test_sessions_are_isolated(store: LedgerStore) -> None:
    await store.append("a", [thought(1, "in a")], expected_version=0)
    await store.append("b", [thought(1, "in b"), thought(2, "in b")], expected_version=0)
    a = await store.read_stream("a")
    assert [r.event for r in a] == [thought(1, "in a")]
    assert [r.version for r in await store.read_stream("b")] == [1, 2]
    assert [h.session_id for h in await store.list_heads()] == ["a", "b"]


@pytest.mark.parametrize(
    "text",
    [
        "Ünïcödé — 思考 🧠 \u200b",
        "NUL \x00 inside \x00",
        "x" * 1_000_000,
        "quotes ' \" and ; DROP TABLE tl_events; --",
        "",
    ],
    ids=["unicode", "nul", "one-megabyte", "sql-metacharacters", "empty"],
)
async def test_payloads_round_trip_exactly(store: LedgerStore, text: str) -> None:
    events: list[LedgerEvent] = [
        thought(1, text),
        ThoughtRevised(
            thought=text,
            thought_number=2,
            total_thoughts=2,
            next_thought_needed=False,
            is_revision=True,
            revises_thought=1,
        ),
        BranchOpened(
            thought=text,
            thought_number=3,
            total_thoughts=3,
            next_thought_needed=True,
            branch_from_thought=1,
            branch_id="b-1",
        ),
    ]
    await store.append("s1", events, expected_version=0)
    stored = await store.read_stream("s1")
    assert [r.event for r in stored] == events
    assert (await store.verify("s1")).ok


async def test_events_survive_close_and_reopen(backend: Backend) -> None:
    if not backend.durable:
        pytest.skip("the memory backend keeps nothing across processes by design")
    store = await backend.open()
    recorded = await store.append("s1", [started(agent="a"), thought(1)], expected_version=0)
    await store.aclose()
    reopened = await backend.open()
    try:
        assert await reopened.read_stream("s1") == recorded
        assert (await reopened.verify("s1")).ok
        more = await reopened.append("s1", [thought(2)], expected_version=2)
        assert more[0].prev_hash == recorded[-1].hash
    finally:
        await reopened.aclose()


async def test_two_appends_racing_on_one_version_exactly_one_wins(backend: Backend) -> None:
    # Two stores on one database behave like two processes; both appends are in flight at once.
    first, second = await backend.open(), await backend.open()
    try:
        await first.append("s1", [thought(1)], expected_version=0)
        results = await asyncio.gather(
            first.append("s1", [thought(2, "from first")], expected_version=1),
            second.append("s1", [thought(2, "from second")], expected_version=1),
            return_exceptions=True,
        )
        wins = [r for r in results if isinstance(r, list)]
        losses = [r for r in results if isinstance(r, ConcurrencyError)]
        assert len(wins) == 1
        assert len(losses) == 1
        stored = await second.read_stream("s1")
        assert [r.version for r in stored] == [1, 2]
        assert stored[1].event == wins[0][0].event
    finally:
        await first.aclose()
        if second is not first:
            await second.aclose()


async def test_racing_creators_of_one_new_session_exactly_one_wins(backend: Backend) -> None:
    first, second = await backend.open(), await backend.open()
    try:
        results = await asyncio.gather(
            first.append("new", [thought(1, "a")], expected_version=0),
            second.append("new", [thought(1, "b")], expected_version=0),
            return_exceptions=True,
        )
        assert sorted(type(r).__name__ for r in results) == ["ConcurrencyError", "list"]
        assert len(await first.read_stream("new")) == 1
    finally:
        await first.aclose()
        if second is not first:
            await second.aclose()


async def test_concurrent_writers_never_duplicate_or_skip_and_readers_see_growing_positions(
    store: LedgerStore,
) -> None:
    writers, per_writer = 8, 25
    seen: list[int] = []
    done = asyncio.Event()

    async def write(n: int) -> None:
        for version in range(per_writer):
            await store.append(f"w{n}", [thought(version + 1)], expected_version=version)
            await asyncio.sleep(0)

    async def read() -> None:
        after = 0
        while True:
            finished = done.is_set()
            page = await store.read_all(after_position=after, limit=50)
            seen.extend(r.position for r in page)
            if page:
                after = page[-1].position
            elif finished:
                return
            await asyncio.sleep(0)

    reader = asyncio.create_task(read())
    await asyncio.gather(*(write(n) for n in range(writers)))
    done.set()
    await reader
    assert seen == sorted(seen)
    assert len(seen) == len(set(seen)) == writers * per_writer
    for n in range(writers):
        assert [r.version for r in await store.read_stream(f"w{n}")] == list(
            range(1, per_writer + 1)
        )


async def test_read_all_pages_through_every_session_in_position_order(store: LedgerStore) -> None:
    for name in ("a", "b", "c"):
        await store.append(name, [thought(1), thought(2)], expected_version=0)
    pages, after = [], 0
    while page := await store.read_all(after_position=after, limit=4):
        pages.append(page)
        after = page[-1].position
    everything = [r for page in pages for r in page]
    assert [len(p) for p in pages] == [4, 2]
    assert [(r.session_id, r.version) for r in everything] == [
        (s, v) for s in ("a", "b", "c") for v in (1, 2)
    ]


async def test_a_retried_append_with_the_same_event_ids_is_not_duplicated(
    store: LedgerStore,
) -> None:
    ids = [uuid.uuid4(), uuid.uuid4()]
    first = await store.append("s1", [thought(1), thought(2)], expected_version=0, event_ids=ids)
    again = await store.append("s1", [thought(1), thought(2)], expected_version=0, event_ids=ids)
    assert again == first
    assert len(await store.read_stream("s1")) == 2
    with pytest.raises(ConcurrencyError):  # same ids, different content: a real conflict
        await store.append(
            "s1", [thought(1, "other"), thought(2)], expected_version=0, event_ids=ids
        )


async def test_an_event_id_used_elsewhere_is_refused_and_nothing_is_written(
    store: LedgerStore,
) -> None:
    used = uuid.uuid4()
    await store.append("s1", [thought(1)], expected_version=0, event_ids=[used])
    with pytest.raises(InvalidInputError, match="already recorded"):
        await store.append("s2", [thought(1)], expected_version=0, event_ids=[used])
    assert await store.read_stream("s2") == []


@pytest.mark.parametrize(
    "session_id", ["", "../etc/passwd", "a b", "x" * 129, "semi;colon", "nul\x00"]
)
async def test_invalid_session_ids_are_refused(store: LedgerStore, session_id: str) -> None:
    with pytest.raises(InvalidInputError, match="invalid session id"):
        await store.append(session_id, [thought(1)], expected_version=0)
    assert await store.read_all() == []


async def test_bad_appends_raise_clear_errors_and_write_nothing(store: LedgerStore) -> None:
    with pytest.raises(InvalidInputError, match="expected_version"):
        await store.append("s1", [thought(1)], expected_version=-1)
    with pytest.raises(InvalidInputError, match="not valid Unicode"):
        await store.append("s1", [thought(1), thought(2, "lone \ud800")], expected_version=0)
    with pytest.raises(InvalidInputError, match="not a ledger event"):
        await store.append("s1", ["not an event"], expected_version=0)  # type: ignore[list-item]
    store.max_event_bytes = 1000
    with pytest.raises(InvalidInputError, match="over the limit"):
        await store.append("s1", [thought(1), thought(2, "x" * 2000)], expected_version=0)
    assert await store.read_all() == []


async def test_the_chain_verifies_and_links_every_event(store: LedgerStore) -> None:
    recorded = await store.append(
        "s1", [started(), thought(1), SessionCleared(reason="done")], expected_version=0
    )
    assert recorded[0].prev_hash == "0" * 64
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(recorded))
    report = await store.verify("s1")
    assert report.ok
    assert report.checked == 3


async def test_a_tampered_payload_is_detected_and_named(backend: Backend) -> None:
    if not backend.durable:
        pytest.skip("tampering needs stored rows")
    store = await backend.open()
    try:
        recorded = await store.append("s1", [thought(n) for n in (1, 2, 3)], expected_version=0)
        await backend.execute(
            "UPDATE tl_events SET payload = replace(payload, 'thought 2', 'thought X') "
            "WHERE session_id = 's1' AND version = 2"
        )
        report = await store.verify("s1")
        assert not report.ok
        assert report.first_bad_version == 2
        assert report.first_bad_event_id == str(recorded[1].event_id)
    finally:
        await store.aclose()


async def test_a_truncated_tail_passes_the_chain_and_fails_the_log_root_taken_before(
    backend: Backend,
) -> None:
    # A session's head is its last event: the chain left after a cut is whole, and only a root
    # over the log taken before (what a signed checkpoint vouches for) tells the events gone.
    if not backend.durable:
        pytest.skip("tampering needs stored rows")
    store = await backend.open()
    try:
        await store.append("s1", [thought(n) for n in (1, 2, 3)], expected_version=0)
        before = await store.tree.log_root(3)
        await backend.execute("DELETE FROM tl_events WHERE session_id = 's1' AND version = 3")
        report = await store.verify("s1")
        after = await store.tree.log_root(3)
        assert (report.ok, report.checked) == (True, 2)
        assert (after.size, before.size) == (2, 3)
        assert after.root != before.root
    finally:
        await store.aclose()


async def test_a_closed_store_refuses_work_with_a_ledger_error(backend: Backend) -> None:
    store = await backend.open()
    await store.aclose()
    with pytest.raises(LedgerError, match="closed"):
        await store.append("s1", [thought(1)], expected_version=0)
    if isinstance(store, MemoryEventStore):
        backend._memory = None


async def test_one_callers_reused_event_id_does_not_fail_a_concurrent_caller(
    store: LedgerStore,
) -> None:
    used = uuid.uuid4()
    await store.append("s1", [thought(1)], expected_version=0, event_ids=[used])
    results = await asyncio.gather(
        store.append(
            "s2", [thought(1), thought(2)], expected_version=0, event_ids=[uuid.uuid4(), used]
        ),
        store.append("s3", [thought(1)], expected_version=0),
        store.append("s4", [thought(1), thought(2)], expected_version=0),
        return_exceptions=True,
    )
    assert isinstance(results[0], InvalidInputError)
    assert [type(r) for r in results[1:]] == [list, list]
    assert await store.read_stream("s2") == []
    assert len(await store.read_stream("s4")) == 2


async def test_appends_to_many_sessions_at_once_each_meet_their_own_outcome(
    backend: Backend,
) -> None:
    # Another writer moved s1 after this one last wrote it: this one's appends to s1 (stale)
    # and to s2 (a session that exists, taken for new) are refused; the others are written.
    first, second = await backend.open(), await backend.open()
    try:
        await first.append("s1", [thought(1)], expected_version=0)
        await first.append("s2", [thought(1)], expected_version=0)
        await second.append("s1", [thought(2, "from the other writer")], expected_version=1)
        results = await asyncio.gather(
            first.append("s1", [thought(2)], expected_version=1),
            first.append("s2", [thought(1)], expected_version=0),
            *(
                first.append(f"n{n}", [thought(1), thought(2)], expected_version=0)
                for n in range(6)
            ),
            return_exceptions=True,
        )
        assert [type(r).__name__ for r in results[:2]] == ["ConcurrencyError"] * 2
        assert all(isinstance(r, list) and len(r) == 2 for r in results[2:])
        stored = [r.event for r in await second.read_stream("s1")]
        texts = [event.thought for event in stored if isinstance(event, ThoughtRecorded)]
        assert texts == ["thought 1", "from the other writer"]
        for n in range(6):
            assert [r.version for r in await second.read_stream(f"n{n}")] == [1, 2]
        assert (await first.append("s1", [thought(3)], expected_version=2))[0].version == 3
    finally:
        await first.aclose()
        if second is not first:
            await second.aclose()


async def test_log_rows_page_like_read_all_and_carry_the_stored_columns(store: LedgerStore) -> None:
    for name in ("a", "b"):
        await store.append(name, [started(), thought(1), thought(2, "ü \x00")], expected_version=0)
    records = await store.read_all()
    rows, after = [], 0
    while page := await store.rows.read_all_rows(after_position=after, limit=4):
        rows += page
        after = page[-1].position
    assert [(r.position, r.session_id, r.version) for r in rows] == [
        (r.position, r.session_id, r.version) for r in records
    ]
    assert [(r.recorded_at, r.schema_version, r.event_type, r.payload) for r in rows] == [
        (format_time(r.recorded_at), r.schema_version, r.event_type, r.payload) for r in records
    ]


async def test_event_rows_page_like_read_all_and_carry_every_stored_column(
    store: LedgerStore,
) -> None:
    for name in ("a", "b"):
        await store.append(name, [started(), thought(1), thought(2, "ü \x00")], expected_version=0)
    await store.append("a", [thought(3)], expected_version=3)
    records = await store.read_all()
    rows, after = [], 0
    while page := await store.rows.read_all_event_rows(after_position=after, limit=4):
        assert len(page) <= 4
        rows += page
        after = page[-1].position
    assert rows == [EventRow.of(record) for record in records]
    assert all(StoredRow(*row).digest() == row.hash for row in rows)
    assert await store.rows.read_all_event_rows(after_position=after) == []
    with pytest.raises(InvalidInputError):
        await store.rows.read_all_event_rows(limit=0)
