"""Hostile input through the Python API: every rejection is a clear LedgerError and writes nothing.

The MCP tools get the same treatment in the MCP test suite; here the facade and the store are
driven directly, against the in-memory store (for volume) and a real SQLite file (for the driver).
Each example first records a few valid thoughts, so that hostile calls meet a session with a
history (thoughts to revise or branch from, an estimate, a next number) as well as new ones.
"""

import asyncio
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.hostile import nasty_text, numbers, values
from tests.support.raw_store import raw_store
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.errors import InvalidInputError, LedgerError
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.store.sqlite import SqliteEventStore
from thoughtledger.ledger.thought import THOUGHT_FIELDS

# 2,000 examples of up to three hostile calls each; a dedicated run may set more.
EXAMPLES = int(os.environ.get("THOUGHTLEDGER_FUZZ_EXAMPLES", "2000"))

fields = list(THOUGHT_FIELDS)


# Near a session's history: thought numbers around the few recorded, flags, a branch id.
plausible = st.one_of(st.integers(-1, 6), st.booleans(), st.sampled_from(["alt", "", "b" * 65]))


@st.composite
def arguments(draw: st.DrawFn, number: int = 1) -> dict[str, Any]:
    """A call that breaks the rules somewhere (mostly), around thought ``number`` of a session."""
    args: dict[str, Any] = {
        "thought": draw(st.one_of(st.just("fine"), nasty_text)),
        "thought_number": draw(st.one_of(st.just(number), numbers)),
        "total_thoughts": draw(st.one_of(st.just(number + 1), numbers)),
        "next_thought_needed": draw(st.one_of(st.just(True), values)),
    }
    for name in draw(st.lists(st.sampled_from(fields), max_size=4)):
        args[name] = draw(st.one_of(plausible, values))
    if draw(st.booleans()):
        del args[draw(st.sampled_from(sorted(args)))]
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(min_size=1, max_size=8))] = draw(values)
    return args


session_ids = st.one_of(st.none(), st.just("ok-session"), nasty_text)


_LOOP = asyncio.new_event_loop()  # one loop for all examples: a loop per example costs more


def valid(number: int) -> dict[str, Any]:
    return {
        "thought": f"step {number}",
        "thought_number": number,
        "total_thoughts": 3,
        "next_thought_needed": True,
    }


@st.composite
def examples(draw: st.DrawFn) -> tuple[int, list[tuple[str | None, dict[str, Any]]]]:
    """How many valid thoughts ``ok-session`` holds first, then up to three hostile calls."""
    history = draw(st.integers(0, 4))
    calls = st.tuples(session_ids, arguments(history + 1))
    return history, draw(st.lists(calls, min_size=1, max_size=3))


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(examples())
def test_any_input_to_think_is_recorded_or_refused_cleanly(
    example: tuple[int, list[tuple[str | None, dict[str, Any]]]],
) -> None:
    history, calls = example

    async def scenario() -> list[LedgerError]:
        store = MemoryEventStore()
        ledger = Ledger(store)
        for number in range(1, history + 1):
            await ledger.think("ok-session", valid(number))
        refusals = []
        for session_id, args in calls:
            before = await store.read_all()
            try:
                outcome = await ledger.think(session_id, args)
            except LedgerError as exc:
                refusals.append(exc)
                assert await store.read_all() == before  # a refused call writes nothing
                continue
            assert (await store.verify(outcome.session_id)).ok
        return refusals

    for refusal in _LOOP.run_until_complete(scenario()):
        assert isinstance(refusal, InvalidInputError)  # bad input is always a ValueError kind
        assert str(refusal).strip()


def test_a_real_sqlite_ledger_keeps_serving_through_hostile_calls(tmp_path: Path) -> None:
    """One ledger file serves every example, as a long-running server would: whatever the calls
    before did to it, the next ones are still answered, and a good thought is still recorded."""
    loop = asyncio.new_event_loop()
    ledger = loop.run_until_complete(_sqlite_ledger(tmp_path / "l.db"))
    seen = 0  # the position of the last event read: each example counts only what it appended
    examples = 0

    @settings(
        max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )
    @given(st.lists(st.tuples(session_ids, arguments()), min_size=1, max_size=5))
    def hostile(calls: list[tuple[str | None, dict[str, Any]]]) -> None:
        nonlocal seen, examples
        examples += 1

        async def scenario() -> None:
            nonlocal seen
            accepted = 0
            for session_id, args in calls:
                try:
                    await ledger.think(session_id, args)
                    accepted += 1
                except InvalidInputError:
                    pass
            after = await ledger.think(
                f"still-serving-{uuid.uuid4().hex}",
                {
                    "thought": "ok",
                    "thought_number": 1,
                    "total_thoughts": 1,
                    "next_thought_needed": False,
                },
            )
            assert after.entry.thought == "ok"
            new = await raw_store(ledger).read_all(after_position=seen, limit=10_000)
            seen = new[-1].position
            assert len(new) >= accepted + 2  # each accepted call appended at least its thought

        loop.run_until_complete(scenario())

    try:
        hostile()
    finally:
        loop.run_until_complete(ledger.aclose())
        loop.close()
    assert examples > 0


async def _sqlite_ledger(path: Path) -> Ledger:
    return Ledger(await SqliteEventStore.open(path))
