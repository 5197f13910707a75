"""The loop marks follow the log with a position: whatever part of a log they have taken in, the
ledger answers what the caught-up ledger answers.

For any log (sessions of repeating thoughts, some redacted) and any split point of it (the marks'
position stopped there: some sessions caught up, some behind, some half way), the marks of every
session, the loop figures of ``stats`` and, on the SQL backends, the ``tl_session_loops`` view
are checked while the marks lag and once they have caught up: the answers are the same, the
fold's, and the view says exactly which sessions are not caught up yet.
"""

import uuid

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.backends import Backend
from tests.support.views import view_rows
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.loop_marks import LoopMark
from thoughtledger.projections.loops import find_repeats

pytestmark = pytest.mark.anyio

# Few words, so that repeats and near repeats are common.
_words = st.sampled_from(["check", "the", "file", "again", "Plan", "step", "é", "E\u0301", "42"])
_texts = st.one_of(
    st.sampled_from(["check the file", "Check the FILE!", "plan step 42", "again"]),
    st.lists(_words, min_size=1, max_size=8).map(" ".join),
)
# A session: its thoughts, each maybe followed by the redaction of an earlier thought (by number).
_session = st.lists(st.tuples(_texts, st.one_of(st.none(), st.integers(1, 12))), max_size=12)


async def _fold_marks(ledger: Ledger, session_id: str) -> list[LoopMark]:
    state = await ledger.state(session_id)
    own = [entry for entry in state.thoughts if entry.source is None]
    return [LoopMark(r.version, r.repeats_version, r.similarity) for r in find_repeats(own)]


async def _record(
    ledger: Ledger, sessions: list[list[tuple[str, int | None]]], pause: int
) -> list[str]:
    """Record the sessions' thoughts interleaved (as concurrent agents do); their ids.

    After ``pause`` thoughts, the stored marks catch up and every session's marks are read (the
    folds the ledger keeps are then warm, and the thoughts and redactions after are not taken
    in yet).
    """
    ids = [f"p-{uuid.uuid4().hex[:10]}" for _ in sessions]
    recorded = 0
    for step in range(max(map(len, sessions), default=0)):
        for session_id, thoughts in zip(ids, sessions, strict=True):
            if step >= len(thoughts):
                continue
            if recorded == pause:
                await ledger.mark_loops()
                for known in ids[: len(sessions)]:
                    await ledger.loops.marks(known)
            recorded += 1
            text, redact = thoughts[step]
            arguments = {
                "thought": text,
                "thought_number": step + 1,
                "total_thoughts": len(thoughts),
                "next_thought_needed": True,
            }
            await ledger.think(session_id, arguments)
            if redact is not None and redact <= step + 1:
                await ledger.redaction.redact(
                    session_id, thought_number=redact, reason="secret", by="auditor"
                )
    return [session_id for session_id, thoughts in zip(ids, sessions, strict=True) if thoughts]


async def _view(backend: Backend, session_ids: list[str]) -> dict[str, tuple[int, bool]]:
    rows = await view_rows(backend, "tl_session_loops", "session_id")
    wanted = set(session_ids)
    return {
        row["session_id"]: (row["repeats"], row["marks_current"])
        for row in rows
        if row["session_id"] in wanted
    }


@settings(
    max_examples=40,
    deadline=None,
    # One store serves every example (PostgreSQL schemas are costly to make): each example
    # works on sessions of its own, after the marks of the earlier ones caught up.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
# A thought redacted after the marks took it in, then said again: no longer a repeat.
@example(
    sessions=[[("check the file", None), ("other", None), ("x", 1), ("check the file", None)]],
    pause=2,
    split=0,
)
@given(
    sessions=st.lists(_session, min_size=1, max_size=4),
    pause=st.integers(0, 40),
    split=st.integers(0, 200),
)
async def test_while_the_marks_lag_at_any_point_the_ledger_answers_as_when_caught_up(
    backend: Backend,
    store: LedgerStore,
    sessions: list[list[tuple[str, int | None]]],
    pause: int,
    split: int,
) -> None:
    ledger = Ledger(store, follow_log=False)
    await ledger.mark_loops()
    session_ids = await _record(ledger, sessions, pause)
    through = await store.loop_marks.loops_through()
    written = await store.read_all(after_position=through, limit=10_000)
    taken = await ledger.loops.catch_up(events=split) if split else 0
    assert taken == min(split, len(written))
    position = await store.loop_marks.loops_through()
    behind = {r.session_id for r in written if r.position > position}

    lagging = {sid: await ledger.loops.marks(sid) for sid in session_ids}
    lagging_figures = await ledger.stats.loops()
    counts = await store.loop_marks.loop_counts()
    assert counts is not None
    assert set(counts.behind) == behind
    if backend.name != "memory":
        viewed = await _view(backend, session_ids)
        assert {sid for sid, (_, current) in viewed.items() if not current} == behind

    await ledger.mark_loops()
    caught_up = await store.loop_marks.loop_counts()
    assert caught_up is not None
    assert caught_up.behind == ()
    for session_id in session_ids:
        expected = await _fold_marks(ledger, session_id)
        assert lagging[session_id] == expected
        assert await ledger.loops.marks(session_id) == expected
        assert await store.loop_marks.loop_marks(session_id) == expected
    assert await ledger.stats.loops() == lagging_figures
    assert lagging_figures == await ledger.stats.loops_folded()
    if backend.name != "memory":
        viewed = await _view(backend, session_ids)
        assert all(current for _, current in viewed.values())
        assert {sid: n for sid, (n, _) in viewed.items()} == {
            sid: len(await _fold_marks(ledger, sid)) for sid in session_ids
        }
