"""``Ledger.subscribe``: the log as it is written through the facade, on every backend."""

import asyncio
from typing import Any

import pytest

from tests.support.backends import Backend
from tests.support.subscribing import take
from thoughtledger import Ledger
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio


def args(number: int, total: int = 3) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": number < total,
    }


async def test_a_subscription_follows_one_sessions_thoughts_as_they_are_recorded(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    first = await ledger.think(None, args(1))
    other = await ledger.think(None, args(1))
    events = ledger.subscribe(session_id=first.session_id)
    caught_up = await take(events, 2)  # the session's start and its first thought
    waiting = asyncio.ensure_future(take(events, 2))
    await ledger.think(other.session_id, args(2))
    await ledger.think(first.session_id, args(2))
    await ledger.think(first.session_id, args(3))
    live = await waiting
    assert caught_up + live == await ledger.events(first.session_id)
    # Resumed after the last position handled, it goes on from there.
    resumed = ledger.subscribe(after=live[0].position, session_id=first.session_id)
    assert await take(resumed, 1) == live[1:]


async def test_subscribing_with_bad_arguments_is_refused_at_the_call(store: LedgerStore) -> None:
    ledger = Ledger(store)
    with pytest.raises(InvalidInputError, match="after must be an integer >= 0"):
        ledger.subscribe(after=-1)
    # Past any position a ledger stores: SQLite followed nothing, silently; PostgreSQL ended.
    with pytest.raises(InvalidInputError, match="after must be a position from 0 to"):
        ledger.subscribe(after=2**63)
    with pytest.raises(InvalidInputError):
        ledger.subscribe(session_id="../etc/passwd")
    with pytest.raises(InvalidInputError, match="poll_interval"):
        ledger.subscribe(poll_interval=-1)
    assert await store.read_all() == []


async def test_closing_the_ledger_ends_its_subscriptions(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    await ledger.think(None, args(1))
    events = ledger.subscribe()
    assert len(await take(events, 2)) == 2
    following = asyncio.ensure_future(take(events, 10))
    await asyncio.sleep(0)
    await ledger.aclose()
    assert await following == []
