"""Hostile input through the Python API: every rejection is a clear LedgerError and writes nothing.

The MCP tools get the same treatment in the MCP test suite; here the facade and the store are
driven directly, against the in-memory store (for volume) and a real SQLite file (for the driver).
"""

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.service import Ledger
from ledger.errors import InvalidInputError, LedgerError
from ledger.store.memory import MemoryEventStore
from ledger.store.sqlite import SqliteEventStore
from ledger.thought import THOUGHT_FIELDS
from tests.support.hostile import nasty_text, numbers, values
from tests.support.raw_store import raw_store

EXAMPLES = int(os.environ.get("THOUGHTLEDGER_FUZZ_EXAMPLES", "10000"))

fields = list(THOUGHT_FIELDS)


@st.composite
def arguments(draw: st.DrawFn) -> dict[str, Any]:
    args: dict[str, Any] = {
        "thought": draw(st.one_of(st.just("fine"), nasty_text)),
        "thought_number": draw(st.one_of(st.just(1), numbers)),
        "total_thoughts": draw(st.one_of(st.just(2), numbers)),
        "next_thought_needed": draw(st.one_of(st.just(True), values)),
    }
    for name in draw(st.lists(st.sampled_from(fields), max_size=4)):
        args[name] = draw(values)
    if draw(st.booleans()):
        del args[draw(st.sampled_from(sorted(args)))]
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(min_size=1, max_size=8))] = draw(values)
    return args


session_ids = st.one_of(st.none(), st.just("ok-session"), nasty_text)


_LOOP = asyncio.new_event_loop()  # one loop for all examples: a loop per example costs more


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(session_ids, arguments())
def test_any_input_to_think_is_recorded_or_refused_cleanly(
    session_id: str | None, args: dict[str, Any]
) -> None:
    async def scenario() -> LedgerError | None:
        store = MemoryEventStore()
        ledger = Ledger(store)
        try:
            outcome = await ledger.think(session_id, args)
        except LedgerError as exc:
            assert await store.read_all() == []  # a refused call writes nothing
            return exc
        assert (await store.verify(outcome.session_id)).ok
        return None

    refusal = _LOOP.run_until_complete(scenario())
    if refusal is not None:
        assert isinstance(refusal, InvalidInputError)  # bad input is always a ValueError kind
        assert str(refusal).strip()


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(session_ids, arguments()), min_size=1, max_size=5))
def test_a_real_sqlite_ledger_keeps_serving_through_hostile_calls(
    calls: list[tuple[str | None, dict[str, Any]]],
) -> None:
    async def scenario(path: Path) -> None:
        ledger = Ledger(await SqliteEventStore.open(path))
        accepted = 0
        try:
            for session_id, args in calls:
                try:
                    await ledger.think(session_id, args)
                    accepted += 1
                except InvalidInputError:
                    pass
            after = await ledger.think(
                "still-serving",
                {
                    "thought": "ok",
                    "thought_number": 1,
                    "total_thoughts": 1,
                    "next_thought_needed": False,
                },
            )
            assert after.entry.thought == "ok"
            total = len(await raw_store(ledger).read_all(limit=10_000))
            assert total >= accepted + 2  # each accepted call appended at least its thought
        finally:
            await ledger.aclose()

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(scenario(Path(tmp) / "l.db"))
