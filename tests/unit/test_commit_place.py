"""Commits at full durability wait on the loop until they are slow as a rule, not once."""

from thoughtledger.ledger.store.sqlite.commit_place import (
    FAST_STREAK,
    SLOW_COMMIT_SECONDS,
    SLOW_STREAK,
    CommitPlace,
)

FAST, SLOW = SLOW_COMMIT_SECONDS / 10, SLOW_COMMIT_SECONDS * 10


def placed(seconds: list[float]) -> CommitPlace:
    place = CommitPlace()
    for taken in seconds:
        place.note(taken)
    return place


def test_a_slow_commit_now_and_then_keeps_commits_on_the_loop() -> None:
    spikes = ([FAST] * 50 + [SLOW] * (SLOW_STREAK - 1)) * 20
    assert not placed(spikes).in_thread


def test_slow_commits_in_a_row_move_the_next_to_a_thread() -> None:
    assert placed([FAST] * 10 + [SLOW] * SLOW_STREAK).in_thread


def test_on_a_thread_only_a_run_of_fast_commits_brings_them_back() -> None:
    moved = [SLOW] * SLOW_STREAK
    assert placed(moved + ([FAST] * (FAST_STREAK - 1) + [SLOW]) * 5).in_thread
    assert not placed(moved + [FAST] * FAST_STREAK).in_thread
