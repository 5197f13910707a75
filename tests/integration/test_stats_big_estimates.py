"""Statistics over large estimates: thought numbers have no upper bound, and PostgreSQL's integer
cast once failed the whole `stats` past 2^31. (Past 2^63, SQLite's JSON functions read a number
as a float, so figures of such estimates are approximate there.)"""

import pytest

from tests.support.backends import Backend
from thoughtledger import Ledger

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("estimate", [3_000_000_000, 2**62])
async def test_stats_read_estimates_beyond_32_bits(backend: Backend, estimate: int) -> None:
    ledger = Ledger(await backend.open())
    try:
        for number in (1, 2):
            await ledger.think(
                "big",
                {
                    "thought": f"step {number}",
                    "thought_number": number,
                    "total_thoughts": estimate + number - 1,
                    "next_thought_needed": number == 1,
                },
            )
        stats = await ledger.stats.summarize()
    finally:
        await ledger.aclose()
    assert stats.overall.sessions == 1
    assert stats.overall.drift_p50 == 1
