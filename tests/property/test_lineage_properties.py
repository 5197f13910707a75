"""Comparing a fork with its source is a cut of the two sessions' folds, whatever they hold."""

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property.strategies import calls
from tests.support.redaction import record_redaction_only
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.memory import MemoryEventStore


@settings(max_examples=40, deadline=None)
@given(calls, calls, calls, st.integers(1, 4), st.data())
def test_a_comparison_is_the_shared_prefix_then_each_sides_own_thoughts(
    before: list[dict[str, Any]],
    source_after: list[dict[str, Any]],
    fork_own: list[dict[str, Any]],
    limit: int,
    data: st.DataObject,
) -> None:
    """Any calls (revisions, branches) on each side, and some of the source's thoughts
    redacted after the fork (the comparison shows the source as it is now)."""

    async def scenario() -> None:
        ledger = Ledger(MemoryEventStore(), ttl=None)
        for call in before:
            await ledger.think("s", call)
        head = await ledger.head("s")
        assert head is not None
        version = data.draw(st.integers(1, head.version), label="fork version")
        fork = (await ledger.fork("s", at_version=version)).id
        for call in source_after:
            await ledger.think("s", call)
        for call in fork_own:
            await ledger.think(fork, call)
        thoughts = [t.version for t in (await ledger.state("s")).thoughts]
        for chosen in data.draw(st.lists(st.sampled_from(thoughts), unique=True, max_size=3)):
            await record_redaction_only(ledger, "s", chosen)

        found = await ledger.lineage.compare(fork, limit=limit)

        shared = await ledger.state("s", as_of_version=version)
        source_now, fork_now = await ledger.state("s"), await ledger.state(fork)
        assert found.common == shared.thought_count
        assert found.common + found.fork_total == fork_now.thought_count
        assert found.fork_thoughts == fork_now.thoughts[found.common :][:limit]
        after = [t for t in source_now.thoughts if t.version > version]
        assert found.source_thoughts == tuple(after[:limit])
        assert found.source_total == len(after)
        # A fork of the fork shares everything its own first event stands on.
        second = (await ledger.fork(fork)).id
        again = await ledger.lineage.compare(second)
        assert again.common == fork_now.thought_count
        assert (again.fork_total, again.source_total) == (0, 0)

    asyncio.run(scenario())
