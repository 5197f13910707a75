"""Scale-out: two `serve --http` processes on one ledger, agents spread across them."""

from collections import Counter

import anyio
import pytest
from mcp import Client

from tests.reliability.conftest import Target
from tests.support.mcp import call
from tests.support.processes import serving_http
from thoughtledger.api.bootstrap import open_store

pytestmark = pytest.mark.anyio

SERVERS, AGENTS, THOUGHTS = 2, 6, 8


async def test_two_http_servers_on_one_ledger_lose_and_duplicate_nothing(target: Target) -> None:
    async with serving_http(target.url) as first, serving_http(target.url) as second:
        endpoints = [first, second]
        acknowledged: list[tuple[str, str]] = []

        async def agent(n: int) -> None:
            async with Client(endpoints[n % SERVERS], mode="legacy") as client:
                for t in range(1, THOUGHTS + 1):
                    # Half of each agent's thoughts go to sessions every agent shares, through
                    # both servers at once; the other half to its own session.
                    session = f"shared-{t % 2}" if t % 2 == 0 else f"agent-{n}"
                    text = f"agent {n} thought {t}"
                    answer = await call(
                        client,
                        "sequentialthinking",
                        {
                            "thought": text,
                            "thoughtNumber": t,
                            "totalThoughts": THOUGHTS,
                            "nextThoughtNeeded": True,
                            "sessionId": session,
                        },
                    )
                    acknowledged.append((answer["sessionId"], text))

        async with anyio.create_task_group() as group:
            for n in range(AGENTS):
                group.start_soon(agent, n)
    assert len(acknowledged) == AGENTS * THOUGHTS

    store = await open_store(target.url)
    try:
        stored: list[tuple[str, str]] = []
        for session in sorted({session for session, _ in acknowledged}):
            records = await store.read_stream(session)
            assert [r.version for r in records] == list(range(1, len(records) + 1))
            assert (await store.verify(session)).ok
            stored += [(session, getattr(r.event, "thought", "")) for r in records]
    finally:
        await store.aclose()
    assert Counter(pair for pair in stored if pair[1]) == Counter(acknowledged)
