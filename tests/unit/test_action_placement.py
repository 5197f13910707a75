"""Where a reader hangs each action: under the latest thought before it with the number it names."""

from datetime import UTC, datetime

from thoughtledger.projections.actions import ActionEntry, placed
from thoughtledger.projections.entries import ThoughtEntry

AT = datetime(2025, 1, 1, tzinfo=UTC)


def thought(version: int, number: int, *, source: str | None = None) -> ThoughtEntry:
    return ThoughtEntry(
        version=version,
        position=version,
        recorded_at=AT,
        kind="thought.recorded",
        thought=f"t{number}",
        thought_number=number,
        total_thoughts=9,
        next_thought_needed=True,
        is_revision=None,
        revises_thought=None,
        branch_from_thought=None,
        branch_id=None,
        needs_more_thoughts=None,
        source=source,
    )


def action(version: int, after: int | None) -> ActionEntry:
    return ActionEntry(version, version, AT, "tool", "{}", False, after, None, "a" * 32, "b" * 16)


def test_each_action_goes_under_the_latest_thought_before_it_with_its_number() -> None:
    # #1 at v2, #2 at v4, #2 again (a branch, say) at v6.
    thoughts = [thought(2, 1), thought(4, 2), thought(6, 2)]
    actions = [action(1, None), action(3, 1), action(5, 2), action(7, 2), action(8, 1)]
    assert placed(thoughts, actions) == {
        None: [actions[0]],
        0: [actions[1], actions[4]],
        1: [actions[2]],
        2: [actions[3]],
    }


def test_a_forks_inherited_thoughts_come_before_its_own_actions_whatever_their_versions() -> None:
    # Inherited thoughts carry the source's versions, which the fork's own may repeat.
    thoughts = [thought(7, 1, source="src"), thought(9, 2, source="src"), thought(2, 3)]
    actions = [action(1, 2), action(3, 3), action(4, 1)]
    assert placed(thoughts, actions) == {1: [actions[0]], 2: [actions[1]], 0: [actions[2]]}


def test_an_action_naming_no_thought_before_it_goes_under_the_latest() -> None:
    thoughts = [thought(2, 1), thought(3, 2)]
    assert placed(thoughts, [action(4, 5)]) == {1: [action(4, 5)]}
