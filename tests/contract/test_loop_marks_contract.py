"""Loop marks on every backend: a projection that follows the log with a position. The marks a
ledger answers equal the pure fold's at every moment, after appends, forks, redactions and
imports, before and after the stored marks catch up; the stored marks equal them once caught up;
the ``tl_session_loops`` view counts them in SQL and says which sessions are not caught up;
``stats`` counts what the fold counts."""

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.backends import Backend
from tests.support.factories import thought
from tests.support.views import view_rows
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.loop_marks import FoldedMarks, LoopMark
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.projections.loops import Repeat, find_repeats

pytestmark = pytest.mark.anyio

SQL_BACKENDS = [
    pytest.param("sqlite"),
    pytest.param("postgres", marks=pytest.mark.postgres),
]

LONG = " ".join(f"word{n}" for n in range(40))
TEXTS = [
    "Read the log.",
    "read the LOG",
    "Grep for the error.",
    "Done.",
    LONG,
    LONG.replace("word7", "changed"),  # one word of 40 changed: similar enough to repeat
    LONG.replace("word7 word8 word9", "x y z"),  # three changed: not a repeat
]


async def record(
    ledger: Ledger, texts: list[str], session_id: str | None = None, *, first: int = 1
) -> str:
    """Record ``texts`` as thoughts of one session, numbered from ``first``; its id."""
    sid = session_id or f"s-{uuid.uuid4().hex[:10]}"
    last = first + len(texts) - 1
    for number, text in enumerate(texts, start=first):
        await ledger.think(
            sid,
            {
                "thought": text,
                "thought_number": number,
                "total_thoughts": last,
                "next_thought_needed": True,
            },
        )
    return sid


def as_marks(repeats: tuple[Repeat, ...]) -> list[LoopMark]:
    return [LoopMark(r.version, r.repeats_version, r.similarity) for r in repeats]


async def expected_marks(ledger: Ledger, session_id: str) -> list[LoopMark]:
    """The marks the pure fold finds over the session's own thoughts."""
    state = await ledger.state(session_id)
    return as_marks(find_repeats(entry for entry in state.thoughts if entry.source is None))


async def assert_current(ledger: Ledger, store: LedgerStore, *session_ids: str) -> None:
    """The ledger answers the fold's marks before the stored marks catch up; stored after."""
    for session_id in session_ids:
        assert await ledger.loops.marks(session_id) == await expected_marks(ledger, session_id)
    await ledger.mark_loops()
    for session_id in session_ids:
        assert await store.loop_marks.loop_marks(session_id) == await expected_marks(
            ledger, session_id
        )
        assert await ledger.loops.marks(session_id) == await expected_marks(ledger, session_id)


_SESSION = st.lists(st.sampled_from(TEXTS), min_size=1, max_size=12)


@settings(
    max_examples=25,
    deadline=None,
    # One store serves every example (PostgreSQL schemas are costly to make): each example
    # works on sessions of its own.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    texts=_SESSION,
    fork_texts=_SESSION,
    fork_at=st.integers(1, 13),
    redact=st.one_of(st.none(), st.integers(1, 12)),
)
async def test_stored_marks_equal_the_fold_after_appends_forks_and_redactions(
    store: LedgerStore, texts: list[str], fork_texts: list[str], fork_at: int, redact: int | None
) -> None:
    ledger = Ledger(store, follow_log=False)
    source = await record(ledger, texts)
    await assert_current(ledger, store, source)
    at = min(fork_at, len(texts) + 1)
    fork = (await ledger.fork(source, at_version=at)).id
    # The fork's numbers go on from its source's (its inherited thoughts are the source's).
    await record(ledger, fork_texts, fork, first=at)
    await assert_current(ledger, store, source, fork)
    if redact is not None and redact <= len(texts):
        await ledger.redaction.redact(source, thought_number=redact, reason="secret", by="me")
        await assert_current(ledger, store, source, fork)
        await record(ledger, [texts[0]], source, first=len(texts) + 1)  # after the redaction
        await assert_current(ledger, store, source)
    assert await ledger.stats.loops() == await ledger.stats.loops_folded()


async def test_a_following_ledger_stores_the_folds_marks_for_what_it_appended_and_redacted(
    store: LedgerStore,
) -> None:
    # The follower folds what this ledger appended from the events it kept, unless the row
    # changed since (a redaction): either way its marks are the fold's, whenever it runs.
    ledger = Ledger(store, follow_log=True)
    try:
        first = await record(ledger, TEXTS)
        await ledger.redaction.redact(first, thought_number=1, reason="secret", by="me")
        second = await record(ledger, [*TEXTS, TEXTS[0]])
        await ledger.mark_loops()
        for session_id in (first, second):
            assert await store.loop_marks.loop_marks(session_id) == await expected_marks(
                ledger, session_id
            )
        assert [mark.version for mark in await store.loop_marks.loop_marks(first)] == [7]
    finally:
        await ledger.loops.aclose()


async def test_imported_sessions_are_taken_in_after_and_counted_meanwhile(
    store: LedgerStore,
) -> None:
    elsewhere = Ledger(MemoryEventStore())
    session_id = await record(elsewhere, ["Read the log.", "Grep.", "read the log", "Read the log"])
    ledger = Ledger(store, follow_log=False)
    await ledger.mark_loops()
    assert await store.imports.import_records(await elsewhere.events(session_id)) == 5
    assert (await store.loop_marks.loop_counts()).behind == (session_id,)  # type: ignore[union-attr]
    # Counted by folding the session meanwhile: never a silent zero.
    counted = await ledger.stats.loops()
    assert (counted.sessions_with_loops, counted.repeats) == (1, 2)
    assert await ledger.mark_loops() == 5
    assert (await store.loop_marks.loop_counts()).behind == ()  # type: ignore[union-attr]
    await assert_current(ledger, store, session_id)
    assert [mark.version for mark in await store.loop_marks.loop_marks(session_id)] == [4, 5]
    assert await ledger.stats.loops() == counted


async def test_an_append_through_the_store_alone_is_taken_in_by_the_next_catch_up(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store, follow_log=False)
    session_id = await record(ledger, ["Read the log.", "read the log"])
    await ledger.mark_loops()
    await store.append(session_id, [thought(3, text="Read the log!")], expected_version=3)
    assert await store.loop_marks.loop_marks(session_id) == [
        LoopMark(3, 2, 1.0)
    ]  # the earlier mark stays
    assert await ledger.loops.marks(session_id) == [LoopMark(3, 2, 1.0), LoopMark(4, 3, 1.0)]
    assert await ledger.mark_loops() == 1
    assert await store.loop_marks.loop_marks(session_id) == [
        LoopMark(3, 2, 1.0),
        LoopMark(4, 3, 1.0),
    ]
    assert (await store.loop_marks.loop_counts()).behind == ()  # type: ignore[union-attr]


async def test_a_fold_from_a_position_another_folder_moved_is_not_written(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store, follow_log=False)
    session_id = await record(ledger, ["Read the log.", "read the log"])
    await ledger.mark_loops()
    through = await store.loop_marks.loops_through()
    assert through > 0
    stale = FoldedMarks(session_id, 0, (LoopMark(3, 2, 0.5),))
    assert not await store.loop_marks.fold_loop_marks(0, through, [stale])
    assert await store.loop_marks.loop_marks(session_id) == [LoopMark(3, 2, 1.0)]
    assert await store.loop_marks.loops_through() == through


@pytest.mark.parametrize(
    "mark",
    [
        LoopMark(1, 1, 1.0),  # repeats itself
        LoopMark(2, 1, 1.5),  # similarity out of range
        LoopMark(1, 0, 1.0),  # no version 0
        LoopMark(2, 1, 1),  # a similarity is a float, not an int
    ],
)
async def test_a_bad_loop_mark_is_refused_and_nothing_is_written(
    store: LedgerStore, mark: LoopMark
) -> None:
    session_id = f"bad-{uuid.uuid4().hex[:8]}"
    await store.append(session_id, [thought(1), thought(2)], expected_version=0)
    through = await store.loop_marks.loops_through()
    end = (await store.read_all(after_position=through))[-1].position
    with pytest.raises(InvalidInputError, match=r"loop mark|similarity"):
        await store.loop_marks.fold_loop_marks(through, end, [FoldedMarks(session_id, 0, (mark,))])
    assert await store.loop_marks.loop_marks(session_id) == []
    assert await store.loop_marks.loops_through() == through


async def test_marks_out_of_order_or_a_position_going_back_are_refused(store: LedgerStore) -> None:
    session_id = f"bad-{uuid.uuid4().hex[:8]}"
    await store.append(session_id, [thought(n) for n in (1, 2, 3)], expected_version=0)
    through = await store.loop_marks.loops_through()
    end = (await store.read_all(after_position=through))[-1].position
    backwards = (LoopMark(3, 1, 1.0), LoopMark(2, 1, 1.0))
    with pytest.raises(InvalidInputError, match="order"):
        await store.loop_marks.fold_loop_marks(
            through, end, [FoldedMarks(session_id, 0, backwards)]
        )
    with pytest.raises(InvalidInputError, match="forward"):
        await store.loop_marks.fold_loop_marks(end, through, [])
    assert await store.loop_marks.loop_marks(session_id) == []
    assert await store.loop_marks.loops_through() == through


@pytest.mark.parametrize("backend", SQL_BACKENDS, indirect=True)
async def test_the_session_loops_view_counts_repeats_in_sql(backend: Backend) -> None:
    store = await backend.open()
    ledger = Ledger(store, follow_log=False)
    try:
        looping = await record(ledger, ["Read the log.", "Grep.", "read the log", "Read the log"])
        straight = await record(ledger, ["One.", "Two.", "Three."])
        await ledger.mark_loops()
        await store.append("raw", [thought(1)], expected_version=0)  # after the position: behind
        rows = {
            row["session_id"]: row
            for row in await view_rows(backend, "tl_session_loops", "session_id")
        }
        assert rows[looping] == {"session_id": looping, "repeats": 2, "marks_current": True}
        assert rows[straight] == {"session_id": straight, "repeats": 0, "marks_current": True}
        assert rows["raw"] == {"session_id": "raw", "repeats": 0, "marks_current": False}
        marks = await view_rows(backend, "tl_loops", "version")
        assert [(m["session_id"], m["version"], m["repeats_version"]) for m in marks] == [
            (looping, 4, 2),
            (looping, 5, 4),
        ]
        assert all(m["similarity"] == 1.0 for m in marks)
        await ledger.mark_loops()
        counted = await ledger.stats.loops()
        viewed = await view_rows(backend, "tl_session_loops", "session_id")
        assert counted.sessions == len(viewed)
        assert counted.sessions_with_loops == sum(1 for row in viewed if row["repeats"])
        assert counted.repeats == sum(row["repeats"] for row in viewed)
        rows = {
            row["session_id"]: row
            for row in await view_rows(backend, "tl_session_loops", "session_id")
        }
        assert rows["raw"]["marks_current"] is True
    finally:
        await store.aclose()
