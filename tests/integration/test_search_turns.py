"""A principal's searches take turns: its flood waits on itself, another principal's does not.

Back to back, one principal's searches take at most half the time (the rest is left to others).

The probe stands between the facade and the real search index of each backend and counts the
searches in flight per principal (a search names its owner in its filter); it slows each one
down so that floods overlap.
"""

import asyncio
from collections import Counter, defaultdict

import pytest

from tests.support.backends import Backend
from thoughtledger import Ledger
from thoughtledger.api import Principal
from thoughtledger.ledger.search_query import SearchQuery
from thoughtledger.ledger.store.search import SearchFilter, SearchHit, Searching

pytestmark = pytest.mark.anyio

FLOOD = 6


class CountingIndex:
    """The real index, with the most searches each owner had in flight at once."""

    def __init__(self, index: Searching) -> None:
        self._index = index
        self.in_flight: Counter[str | None] = Counter()
        self.most: Counter[str | None] = Counter()
        self.finished: list[str | None] = []
        self.busy: defaultdict[str | None, float] = defaultdict(float)
        """Seconds each owner's searches took, together."""

    async def search(
        self,
        query: SearchQuery,
        where: SearchFilter | None = None,
        *,
        limit: int = 20,
        offset: int = 0,
    ) -> list[SearchHit]:
        owner = where.owner if where is not None else None
        self.in_flight[owner] += 1
        self.most[owner] = max(self.most[owner], self.in_flight[owner])
        started = asyncio.get_running_loop().time()
        try:
            await asyncio.sleep(0.05)
            return await self._index.search(query, where, limit=limit, offset=offset)
        finally:
            self.in_flight[owner] -= 1
            self.finished.append(owner)
            self.busy[owner] += asyncio.get_running_loop().time() - started


async def test_a_flood_of_one_principal_s_searches_runs_one_at_a_time_and_holds_back_no_other(
    backend: Backend,
) -> None:
    store = await backend.open()
    probe = CountingIndex(store.search)
    store.search = probe  # the probe in front of the real index
    ledger = Ledger(store)
    try:
        alice = ledger.as_principal(Principal("alice", "writer"))
        bob = ledger.as_principal(Principal("bob", "writer"))
        for scope in (alice, bob):
            await scope.think(
                None,
                {
                    "thought": "check the replica lag",
                    "thought_number": 1,
                    "total_thoughts": 1,
                    "next_thought_needed": False,
                },
            )
        flood = [asyncio.create_task(alice.search("replica lag")) for _ in range(FLOOD)]
        await asyncio.sleep(0.01)  # the flood is in line first
        found = await bob.search("replica lag")
        assert [hit.session_id for hit in found.results]  # bob finds his own thought
        pages = await asyncio.gather(*flood)
        assert all(len(page.results) == 1 for page in pages)
        assert probe.most["alice"] == 1
        # Bob's search did not wait for alice's line: it ended before most of her flood.
        assert probe.finished.index("bob") < FLOOD // 2
    finally:
        await ledger.aclose()


async def test_one_principal_s_searches_back_to_back_leave_half_the_time_to_others(
    backend: Backend,
) -> None:
    store = await backend.open()
    probe = CountingIndex(store.search)
    store.search = probe
    ledger = Ledger(store)
    try:
        alice = ledger.as_principal(Principal("alice", "writer"))
        step = {
            "thought": "check the replica lag",
            "thought_number": 1,
            "total_thoughts": 1,
            "next_thought_needed": False,
        }
        await alice.think(None, step)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.gather(*(alice.search("replica lag") for _ in range(4)))
        took = loop.time() - started
        # Four searches one at a time, each but the first after a pause as long as the one
        # before: about 7/4 of their own time (one at a time, without pauses: 1).
        assert took >= 1.5 * probe.busy["alice"], (took, probe.busy["alice"])
        # The ledger's own user (no principal) is never paused.
        started = loop.time()
        await asyncio.gather(*(ledger.search("replica lag") for _ in range(4)))
        assert loop.time() - started < 1.5 * probe.busy[None], probe.busy[None]
    finally:
        await ledger.aclose()
