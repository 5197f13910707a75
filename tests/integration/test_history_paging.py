"""Paged history through the facade, on every backend: pages, cursors, bounds and refusals."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.backends import Backend
from tests.support.factories import long_session
from tests.support.samples import Clock, thought
from thoughtledger import Ledger
from thoughtledger.api.history import SCAN_BUDGET, HistoryPage
from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError
from thoughtledger.projections.answers import thought_history

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ledger(backend: Backend) -> AsyncIterator[Ledger]:
    async with Ledger(await backend.open(clock=Clock()), ttl=None) as opened:
        yield opened


async def _record(ledger: Ledger, session_id: str, count: int) -> None:
    """``count`` thoughts: a main line, a revision every 5th, a branch ``b`` every 7th."""
    for n in range(1, count + 1):
        extra: dict[str, Any] = {}
        if n % 7 == 0:
            extra = {"branch_from_thought": 1, "branch_id": "b"}
        elif n % 5 == 0:
            extra = {"is_revision": True, "revises_thought": n - 1}
        await ledger.think(session_id, thought(n, count, **extra))


async def _all_pages(ledger: Ledger, session_id: str, **options: Any) -> list[HistoryPage]:
    pages = [await ledger.history(session_id, **options)]
    while pages[-1].more:
        pages.append(await ledger.history(session_id, after=pages[-1].next_cursor, **options))
    return pages


async def test_pages_of_a_session_concatenate_to_its_whole_history(ledger: Ledger) -> None:
    await _record(ledger, "s", 30)
    whole = await ledger.session("s").history()
    pages = await _all_pages(ledger, "s", limit=7)
    assert [len(page.items) for page in pages] == [7, 7, 7, 7, 2]
    assert [item for page in pages for item in page.items] == whole
    last = pages[-1]
    assert (last.more, last.next_cursor, last.status, last.thought_count) == (
        False,
        None,
        "revision",  # thought 30 revises 29
        30,
    )
    assert last.version == last.latest_version == 31  # session.started, then 30 thoughts


async def test_a_branch_filter_pages_only_that_branch(ledger: Ledger) -> None:
    await _record(ledger, "s", 30)
    pages = await _all_pages(ledger, "s", limit=2, branch="b")
    items = [item for page in pages for item in page.items]
    assert [item["thoughtNumber"] for item in items] == [7, 14, 21, 28]
    assert {item["branchId"] for item in items} == {"b"}
    assert await ledger.session("s").branches() != []


async def test_paging_now_reads_thoughts_recorded_between_pages(ledger: Ledger) -> None:
    await _record(ledger, "s", 4)
    first = await ledger.history("s", limit=3)
    await ledger.think("s", thought(5, 5))
    rest = await ledger.history("s", after=first.next_cursor, limit=3)
    assert [item["thoughtNumber"] for item in first.items + rest.items] == [1, 2, 3, 4, 5]
    assert rest.thought_count == 5


async def test_a_read_as_of_a_version_keeps_its_snapshot_across_pages(ledger: Ledger) -> None:
    await _record(ledger, "s", 10)
    first = await ledger.history("s", limit=2, as_of_version=5)
    await ledger.think("s", thought(11, 11))
    rest = await ledger.history("s", after=first.next_cursor, limit=10)
    assert [item["version"] for item in first.items + rest.items] == [2, 3, 4, 5]
    assert (rest.version, rest.latest_version, rest.thought_count) == (5, 12, 4)
    again = await ledger.history("s", after=first.next_cursor, as_of_version=5)
    assert again.items == rest.items
    with pytest.raises(InvalidInputError, match="as of version 5"):
        await ledger.history("s", after=first.next_cursor, as_of_version=6)


async def test_a_read_as_of_a_time_pages_the_session_as_it_was(ledger: Ledger) -> None:
    await _record(ledger, "s", 12)
    events = await ledger.events("s")
    moment = events[6].recorded_at
    expected = await ledger.session("s").history(as_of_time=moment)
    pages = await _all_pages(ledger, "s", limit=4, as_of_time=moment)
    assert [item for page in pages for item in page.items] == expected
    assert pages[0].version == (await ledger.state("s", as_of_time=moment)).version


async def test_a_cleared_session_pages_to_its_end_with_its_status(ledger: Ledger) -> None:
    await _record(ledger, "s", 3)
    assert await ledger.clear_session("s")
    pages = await _all_pages(ledger, "s", limit=3)
    assert len(pages) == 1  # the trailing clear is read with the page: no empty last page
    assert (pages[0].status, pages[0].thought_count, pages[0].more) == ("cleared", 3, False)


async def test_an_expired_session_pages_with_its_status_and_count(backend: Backend) -> None:
    now = [datetime(2024, 5, 2, tzinfo=UTC)]
    store = await backend.open(clock=lambda: now[0])
    async with Ledger(store, ttl=timedelta(minutes=30), clock=lambda: now[0]) as ledger:
        await _record(ledger, "s", 3)
        now[0] += timedelta(hours=1)
        assert await ledger.expire_idle("s")  # records the expiry
        page = await ledger.history("s")
        state = await ledger.state("s")
    assert (page.status, page.thought_count, page.version) == ("expired", 3, state.version)
    assert page.items == thought_history(state)


async def test_a_page_stops_at_the_byte_cap_but_never_comes_back_empty(ledger: Ledger) -> None:
    await ledger.think("s", {**thought(1, 3), "thought": "x" * 5000})
    await ledger.think("s", thought(2, 3))
    await ledger.think("s", thought(3, 3))
    first = await ledger.history("s", limit=10, max_bytes=1000)
    assert [item["thoughtNumber"] for item in first.items] == [1]  # larger than the cap: alone
    rest = await ledger.history("s", after=first.next_cursor, limit=10, max_bytes=1000)
    assert [item["thoughtNumber"] for item in rest.items] == [2, 3]


async def test_the_session_handle_lists_every_thought_or_pages_them(ledger: Ledger) -> None:
    await _record(ledger, "s", 5)
    session = ledger.session("s")
    whole = await session.history()
    assert isinstance(whole, list)
    assert len(whole) == 5
    page = await session.history(limit=2)
    assert page.items == whole[:2]
    assert page.next_cursor is not None
    rest = await session.history(after=page.next_cursor)
    assert rest.items == whole[2:]
    assert not rest.more


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"limit": 0}, "limit must be an integer >= 1"),
        ({"limit": -3}, "limit must be an integer >= 1"),
        ({"after": "garbage!"}, "not a history cursor"),
        ({"after": ""}, "not a history cursor"),
        ({"branch": "nowhere"}, "session 's' has no branch 'nowhere'"),
        ({"as_of_version": 99}, "past its end"),
        ({"as_of_version": 2, "as_of_time": None}, None),
    ],
)
async def test_bad_paging_arguments_are_refused_and_write_nothing(
    ledger: Ledger, options: dict[str, Any], message: str | None
) -> None:
    await _record(ledger, "s", 3)
    before = await ledger.events("s")
    if message is None:
        assert (await ledger.history("s", **options)).items
        return
    with pytest.raises(InvalidInputError, match=message):
        await ledger.history("s", **options)
    assert await ledger.events("s") == before


async def test_an_unknown_branch_of_a_long_session_is_refused_at_once_while_recording_it(
    backend: Backend,
) -> None:
    store = await backend.open()
    version = await long_session(store, "long", SCAN_BUDGET + 10)
    async with Ledger(store, ttl=None) as reader:
        # Not held: the first page scans its budget and cannot tell yet.
        page = await reader.history("long", branch="nope")
        assert (page.items, page.more) == ([], True)
        await reader.think("long", thought(version, version, branch_from_thought=1, branch_id="b"))
        with pytest.raises(InvalidInputError, match="session 'long' has no branch 'nope'"):
            await reader.history("long", branch="nope")
        pages = await _all_pages(reader, "long", branch="b")
    assert [len(page.items) for page in pages] == [0, 1]  # a scan of its budget, then the end
    assert pages[-1].items[0]["branchId"] == "b"


async def test_a_cursor_is_refused_for_another_session_or_branch(ledger: Ledger) -> None:
    await _record(ledger, "s", 30)
    await _record(ledger, "t", 3)
    page = await ledger.history("s", limit=2)
    with pytest.raises(InvalidInputError, match="this cursor pages session 's', not 't'"):
        await ledger.history("t", after=page.next_cursor)
    with pytest.raises(InvalidInputError, match="pages every thought, not branch 'b'"):
        await ledger.history("s", after=page.next_cursor, branch="b")


async def test_an_unknown_session_is_not_found(ledger: Ledger) -> None:
    with pytest.raises(SessionNotFoundError):
        await ledger.history("nobody")
    assert await ledger.head("nobody") is None
