"""Properties of the loop marks: whoever writes, in whatever order, and however little of a
session a writer holds, the marks a ledger answers, and the stored marks once caught up, are the
pure fold's over the log."""

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.loop_marks import LoopMark
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.projections.loops import LOOP_WINDOW, find_repeats

# Few words, so that repeats and near repeats are common.
_words = st.sampled_from(["check", "the", "file", "again", "Plan", "step", "é", "E\u0301", "42"])
_texts = st.lists(_words, min_size=1, max_size=10).map(" ".join)
# Each thought: its text, which of two ledgers on one store writes it, and whether the thought
# before it is then redacted.
_steps = st.lists(st.tuples(_texts, st.integers(0, 1), st.booleans()), min_size=1, max_size=70)


async def _run(steps: list[tuple[str, int, bool]]) -> None:
    store = MemoryEventStore()
    # Two writers of one session, each holding only the latest 2-4 thoughts (a window needs 50):
    # each append after the other's builds its window afresh, from the log.
    writers = [Ledger(store, hold_thoughts=2, cache_size=1, follow_log=False) for _ in range(2)]
    for number, (text, writer, redact) in enumerate(steps, start=1):
        arguments = {
            "thought": text,
            "thought_number": number,
            "total_thoughts": len(steps),
            "next_thought_needed": True,
        }
        await writers[writer].think("s", arguments)
        if redact and number > 1:
            await writers[1 - writer].redaction.redact(
                "s", thought_number=number - 1, reason="r", by="p"
            )
        if number % 7 == 0:  # the stored marks catch up now and then, by one writer or the other
            await writers[1 - writer].mark_loops()
    state = await writers[0].state("s")
    own = [entry for entry in state.thoughts if entry.source is None]
    expected = [LoopMark(r.version, r.repeats_version, r.similarity) for r in find_repeats(own)]
    assert await writers[1].loops.marks("s") == expected
    await _ranges_agree(writers[1], expected)
    await writers[0].mark_loops()
    assert await store.loop_marks.loop_marks("s") == expected
    assert await writers[1].loops.marks("s") == expected
    counts = await store.loop_marks.loop_counts()
    assert counts is not None
    assert counts.behind == ()


async def _ranges_agree(ledger: Ledger, expected: list[LoopMark]) -> None:
    """A follower's marks of each version alone, and of any range, are the whole answer's."""
    head = (await ledger.state("s")).version
    for version in range(1, head + 1):
        alone = await ledger.loops.marks("s", after_version=version - 1, to_version=version)
        assert alone == [mark for mark in expected if mark.version == version]
    for after in (0, head // 3, head // 2):
        tail = await ledger.loops.marks("s", after_version=after)
        assert tail == [mark for mark in expected if mark.version > after]


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(steps=_steps)
def test_two_writers_holding_few_thoughts_store_the_folds_marks(
    steps: list[tuple[str, int, bool]],
) -> None:
    asyncio.run(_run(steps))


@settings(max_examples=30, deadline=None)
@given(steps=st.lists(st.tuples(_texts, st.just(0), st.just(False)), min_size=LOOP_WINDOW))
def test_one_writer_past_a_window_of_thoughts_stores_the_folds_marks(
    steps: list[tuple[str, int, bool]],
) -> None:
    asyncio.run(_run(steps))
