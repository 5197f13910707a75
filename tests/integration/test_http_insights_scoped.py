"""``thinking_insights`` counts and finds only what its caller may read.

A session recorded without an owner under the agent name ``alice`` (by a stdio server or a
script with ``--agent alice``), and bob's own, are not alice's: her figures, loops and search
over ``serve --http --auth`` leave them out, though the agent name is hers. A real server.
"""

from pathlib import Path

import anyio
import pytest

from tests.support.auth import serving_with_auth
from tests.support.mcp import call, thought
from tests.support.processes import WAIT
from thoughtledger import open_ledger

pytestmark = pytest.mark.anyio


async def _record_under_agent(db: str, text: str, owner: str | None) -> None:
    async with open_ledger(db, ttl=None) as ledger:
        step = {"thought": text, "thought_number": 1, "total_thoughts": 2}
        first = {**step, "next_thought_needed": True}
        outcome = await ledger.think(None, first, owner=owner, metadata={"agent": "alice"})
        again = {**step, "thought_number": 2, "next_thought_needed": False}
        await ledger.think(outcome.session_id, again, owner=owner)


async def test_a_writers_insights_leave_out_sessions_it_does_not_own(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path, "--tools", "all") as server:
        alice = server.mint("alice")
        await _record_under_agent(server.db, "zebra crossing", None)
        await _record_under_agent(server.db, "zebra stripes", "bob")
        with anyio.fail_after(WAIT):
            async with server.client(alice) as client:
                await call(client, "sequentialthinking", thought(1, thought="my own walrus"))
                insights = await call(client, "thinking_insights", {"query": "zebra"})
                own = await call(client, "thinking_insights", {"query": "walrus"})
    assert insights["figures"]["sessions"] == 1
    assert insights["figures"]["thoughts"] == 1
    assert insights["found"] == []
    assert len(own["found"]) == 1, own
    assert "walrus" in str(own["found"][0])
