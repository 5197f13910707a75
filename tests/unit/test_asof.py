"""Time travel (``thoughtledger.projections.asof``): a session cut at a version, and the version at
a time."""

from datetime import datetime, timedelta

import pytest

from tests.support.factories import START, STEP, fold, started
from tests.support.samples import thought
from thoughtledger.ledger.events import (
    BranchExtended,
    BranchOpened,
    LedgerEvent,
    SessionCleared,
    ThoughtRecorded,
    ThoughtRevised,
)
from thoughtledger.projections.asof import as_of_version, version_at
from thoughtledger.projections.state import empty, trim

TICK = timedelta(microseconds=1)


LOG: list[LedgerEvent] = [
    started(agent="a"),  # version 1, at START
    ThoughtRecorded(**thought(1, 4)),  # 2, START + STEP
    BranchOpened(**thought(2, 4, branch_from_thought=1, branch_id="b")),  # 3
    ThoughtRevised(**thought(2, 4, is_revision=True, revises_thought=1)),  # 4
    BranchExtended(**thought(3, 4, branch_from_thought=1, branch_id="b")),  # 5
    SessionCleared(reason="done"),  # 6, START + 5 * STEP
]
FULL = fold(*LOG)


def at(version: int) -> datetime:
    """When event ``version`` of :data:`LOG` was recorded."""
    return START + STEP * (version - 1)


# -- as_of_version ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(len(LOG) + 1))
def test_the_state_at_a_version_is_the_state_of_that_prefix(version: int) -> None:
    assert as_of_version(FULL, version) == fold(*LOG[:version])


def test_the_current_version_is_the_state_itself() -> None:
    assert as_of_version(FULL, FULL.version) is FULL


def test_version_zero_is_the_empty_session() -> None:
    assert as_of_version(FULL, 0) == empty("s")


def test_a_cut_after_the_start_alone_keeps_its_metadata_and_time() -> None:
    cut = as_of_version(FULL, 1)
    assert (cut.metadata, cut.started_version, cut.thoughts) == ({"agent": "a"}, 1, ())
    assert cut.updated_at == cut.started_at == START


def test_a_cut_drops_the_branches_not_yet_opened_and_the_members_not_yet_added() -> None:
    assert dict(as_of_version(FULL, 2).branches) == {}
    assert as_of_version(FULL, 3).branches["b"].versions == (3,)
    assert as_of_version(FULL, 5).branches["b"].versions == (3, 5)


def test_a_cut_before_the_clear_is_open_and_at_the_clear_is_cleared() -> None:
    before, cleared = as_of_version(FULL, 5), as_of_version(FULL, 6)
    assert (before.ended, before.ended_version, before.updated_at) == (None, None, at(5))
    assert (cleared.ended, cleared.ended_version, cleared.updated_at) == ("cleared", 6, at(6))


def test_a_session_that_began_without_a_start_event_cuts_the_same_way() -> None:
    log = LOG[1:3]
    assert as_of_version(fold(*log), 1) == fold(*log[:1])


@pytest.mark.parametrize("version", [-1, len(LOG) + 1])
def test_a_version_outside_the_log_is_refused(version: int) -> None:
    with pytest.raises(ValueError, match=f"version {version} is outside 0..6"):
        as_of_version(FULL, version)


def test_a_trimmed_state_is_refused() -> None:
    with pytest.raises(ValueError, match="trimmed"):
        as_of_version(trim(FULL, 1), 2)


# -- version_at ------------------------------------------------------------------------------


def test_an_empty_session_has_no_version_at_any_time() -> None:
    assert version_at(empty("s"), START) == 0


@pytest.mark.parametrize(
    ("moment", "version"),
    [
        (START - TICK, 0),
        (START, 1),
        (at(2) - TICK, 1),
        (at(2), 2),
        (at(3) - TICK, 2),
        (at(5), 5),
        (at(6) - TICK, 5),
        (at(6), 6),
        (at(6) + STEP, 6),
    ],
    ids=[
        "before-start",
        "at-start",
        "before-first-thought",
        "at-first-thought",
        "before-second-thought",
        "at-last-thought",
        "before-clear",
        "at-clear",
        "long-after",
    ],
)
def test_the_version_at_a_time_counts_the_events_recorded_by_then(
    moment: datetime, version: int
) -> None:
    assert version_at(FULL, moment) == version


def test_a_clock_that_stepped_back_never_shows_an_event_without_those_before_it() -> None:
    # Thought 2 was recorded at +30s, thought 3 at +20s: at +25s the start and thought 1
    # are shown, and thought 3 is not shown before thought 2 is.
    times = [START, START + STEP, START + 3 * STEP, START + 2 * STEP]
    state = fold(*LOG[:4], times=times)
    assert version_at(state, START + 2.5 * STEP) == 2
    assert version_at(state, START + 3 * STEP) == 4


def test_without_a_start_event_the_first_thought_starts_the_count() -> None:
    state = fold(*LOG[1:3])  # versions 1 and 2, at START and START + STEP
    assert [version_at(state, moment) for moment in (START - TICK, START, START + STEP)] == [
        0,
        1,
        2,
    ]
