"""Reading only some event types on every backend: the same rows a filtered read of the log gives.

The ledger-wide figures (``stats``' model usage and annotation labels) read only model-written
and captured thoughts and annotations; the SQL backends read them through an index that holds
only those.
"""

import sqlite3

import pytest

from tests.support.backends import Backend
from tests.support.factories import GENERATION, started, thought
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import (
    Capture,
    LedgerEvent,
    ThoughtAnnotated,
    ThoughtCaptured,
    ThoughtGenerated,
)
from thoughtledger.ledger.store.rows import COUNTED_TYPES, types_in

pytestmark = pytest.mark.anyio


def generated(number: int) -> ThoughtGenerated:
    return ThoughtGenerated(
        thought=f"written {number}",
        thought_number=number,
        total_thoughts=max(number, 3),
        next_thought_needed=True,
        kind="thought.recorded",
        guidance="go on",
        generation=GENERATION,
    )


def captured(number: int) -> ThoughtCaptured:
    return ThoughtCaptured(
        thought=f"captured {number}",
        thought_number=number,
        total_thoughts=number,
        next_thought_needed=True,
        capture=Capture(
            form="full", dialect="semconv", trace_id="a" * 32, span_id="b" * 16, part=number
        ),
    )


async def test_a_typed_read_pages_through_exactly_the_events_of_those_types(
    backend: Backend,
) -> None:
    store = await backend.open()
    try:
        for session in ("a", "b"):
            await store.append(session, [started(agent="x")], expected_version=0)
        version = {"a": 1, "b": 1}
        for number in range(1, 31):
            session = "a" if number % 2 else "b"
            if number % 7 == 0:
                event: LedgerEvent = generated(number)
            elif number % 5 == 0:
                event = ThoughtAnnotated(thought_number=1, label="checked")
            elif number % 4 == 0:
                event = captured(number)
            else:
                event = thought(number)
            await store.append(session, [event], expected_version=version[session])
            version[session] += 1
        everything = []
        after = 0
        while page := await store.rows.read_all_event_rows(after_position=after, limit=7):
            everything += page
            after = page[-1].position
        wanted = [row for row in everything if row.event_type in COUNTED_TYPES]
        typed = []
        after = 0
        while page := await store.rows.read_event_rows_of_types(
            COUNTED_TYPES, after_position=after, limit=3
        ):
            typed += page
            after = page[-1].position
        assert typed == wanted
        assert {row.event_type for row in typed} == set(COUNTED_TYPES)
        only_started = await store.rows.read_event_rows_of_types(["session.started"], limit=10)
        assert [row.session_id for row in only_started] == ["a", "b"]
    finally:
        await store.aclose()


async def test_an_unknown_event_type_is_refused_before_anything_is_read(backend: Backend) -> None:
    store = await backend.open()
    try:
        for kinds in (["thought.generated' OR '1'='1"], []):
            with pytest.raises(InvalidInputError, match="unknown event types"):
                await store.rows.read_event_rows_of_types(kinds)
    finally:
        await store.aclose()


async def test_sqlite_reads_the_counted_types_through_their_own_index(backend: Backend) -> None:
    store = await backend.open()
    await store.aclose()
    if backend.name != "sqlite":
        pytest.skip("the query plan is SQLite's")
    query = "EXPLAIN QUERY PLAN SELECT * FROM tl_events WHERE event_type IN %s AND position > 0"
    with sqlite3.connect(backend.sqlite_path) as db:
        plan = db.execute(query % types_in(COUNTED_TYPES) + " ORDER BY position").fetchall()
    db.close()
    assert "tl_events_counted" in " ".join(str(step) for step in plan)
