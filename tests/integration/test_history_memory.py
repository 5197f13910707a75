"""Reading a page of a history takes memory bounded by the page, not by the session."""

import functools
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from tests.support.factories import long_session
from tests.support.mcp import call, connect
from tests.support.raw_store import raw_store
from thoughtledger import Ledger, open_ledger
from thoughtledger.projections.paging import HistoryCursor

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SMALL, LARGE = 1_000, 50_000


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[Ledger]:
    async with open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}", ttl=None) as opened:
        await long_session(raw_store(opened), "small", SMALL)
        await long_session(raw_store(opened), "large", LARGE)
        yield opened


async def _peak(read: Callable[[], Awaitable[object]]) -> int:
    """The most memory Python held at once during ``read``, above what it held before."""
    await read()  # once first, so that imports and statement caches are not counted
    return await _first_peak(read)


async def test_a_page_of_a_50k_session_takes_the_memory_of_a_page_of_a_1k_session(
    ledger: Ledger,
) -> None:
    peaks: dict[str, list[int]] = {"small": [], "large": []}
    for session_id, thoughts in (("small", SMALL), ("large", LARGE)):
        version = thoughts + 1
        for after in (None, version // 2, version - 100):
            cursor = HistoryCursor(session_id, after).encode() if after is not None else None

            async def page(session_id: str = session_id, cursor: str | None = cursor) -> object:
                read = await ledger.history(session_id, limit=100, after=cursor)
                assert len(read.items) == 100
                return read

            peaks[session_id].append(await _peak(page))
    whole = await _peak(lambda: ledger.state("large"))
    # Within a small factor (allocator noise on a peak of some hundred KiB), and far below
    # folding the session whole, which is what the measure would show if a page grew with it.
    assert max(peaks["large"]) <= 2 * max(peaks["small"]) + 64 * 1024, peaks
    assert whole > 20 * max(peaks["large"]), (whole, peaks)


async def test_a_fresh_server_s_first_page_of_a_50k_session_takes_a_page_s_memory(
    tmp_path: Path,
) -> None:
    """``thinking_history``'s first read of a long session folds none of it (the fork point
    beside the page is one read of the session's first event)."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    async with open_ledger(url, ttl=None) as opened:
        for session_id in ("warm", "small"):
            await long_session(raw_store(opened), session_id, SMALL)
        await long_session(raw_store(opened), "large", LARGE)
    peaks: dict[str, int] = {}
    async with open_ledger(url, ttl=None) as fresh, connect(fresh, "auto") as client:

        async def first_page(session_id: str) -> object:
            read = await call(client, "thinking_history", {"sessionId": session_id, "limit": 100})
            assert len(read["history"]) == 100
            return read

        await first_page("warm")  # imports and statement caches, counted for neither
        for session_id in ("small", "large"):
            peaks[session_id] = await _first_peak(functools.partial(first_page, session_id))
    # Folding the long session first, its peak was 2.3 MB against the short one's 1.0 MB.
    assert peaks["large"] <= 1.5 * peaks["small"] + 64 * 1024, peaks


async def _first_peak(read: Callable[[], Awaitable[object]]) -> int:
    """The most memory Python held at once during ``read``'s one call, above what it held."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        await read()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before
