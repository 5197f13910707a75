"""The pure rules of sequential thinking (``thoughtledger.ledger.decide``): arguments in, events
out."""

from typing import Any

import pytest

from tests.support.factories import GENERATION
from thoughtledger.ledger.decide import (
    Generated,
    ThinkCommand,
    classify,
    decide_thought,
    parse_command,
)
from thoughtledger.ledger.errors import InvalidThoughtError
from thoughtledger.ledger.events import (
    BranchExtended,
    BranchOpened,
    SessionStarted,
    ThoughtGenerated,
    ThoughtRecorded,
    ThoughtRevised,
)


def command(number: int = 1, total: int = 3, **extra: Any) -> ThinkCommand:
    return parse_command(
        {
            "thought": f"thought {number}",
            "thought_number": number,
            "total_thoughts": total,
            "next_thought_needed": True,
            **extra,
        }
    )


def refusal(arguments: dict[str, Any], **limits: int) -> str:
    with pytest.raises(InvalidThoughtError) as caught:
        parse_command(arguments, **limits)
    return str(caught.value)


BASE: dict[str, Any] = {
    "thought": "t",
    "thought_number": 1,
    "total_thoughts": 1,
    "next_thought_needed": True,
}


# -- parse_command: what a command accepts ---------------------------------------------------


def test_every_field_the_references_accept_is_kept() -> None:
    full = {
        **BASE,
        "is_revision": True,
        "revises_thought": 1,
        "branch_from_thought": 1,
        "branch_id": "b",
        "needs_more_thoughts": False,
    }
    assert parse_command(full).model_dump() == full


@pytest.mark.parametrize(
    ("field", "sent"),
    [("thought_number", "3"), ("total_thoughts", 2.0), ("next_thought_needed", 1)],
)
def test_types_are_strict_no_spelling_is_converted(field: str, sent: object) -> None:
    assert f"{field}: " in refusal({**BASE, field: sent})


@pytest.mark.parametrize("field", ["thought_number", "total_thoughts", "revises_thought"])
def test_counts_start_at_one(field: str) -> None:
    assert f"{field}: " in refusal({**BASE, field: 0})


def test_an_unknown_field_is_named_as_unknown() -> None:
    assert refusal({**BASE, "thoughtNumber": 1}) == "invalid thought: thoughtNumber: unknown field"


def test_an_empty_thought_must_not_be_empty() -> None:
    assert refusal({**BASE, "thought": ""}) == "invalid thought: thought: must not be empty"


def test_every_problem_is_named_in_one_line() -> None:
    message = refusal({"thought": "t", "thought_number": 0})
    assert message.startswith("invalid thought: ")
    assert "\n" not in message
    for field in ("thought_number", "total_thoughts", "next_thought_needed"):
        assert f"{field}: " in message


def test_a_branch_id_is_at_most_256_characters() -> None:
    assert parse_command({**BASE, "branch_id": "b" * 256}).branch_id == "b" * 256
    assert "branch_id: " in refusal({**BASE, "branch_id": "b" * 257})


@pytest.mark.parametrize(
    ("text", "accepted"),
    [("a" * 10, True), ("a" * 11, False), ("é" * 5, True), ("é" * 6, False), ("😀" * 3, False)],
    ids=["ascii-at-limit", "ascii-over", "two-byte-at-limit", "two-byte-over", "four-byte-over"],
)
def test_the_thought_limit_counts_utf8_bytes(text: str, accepted: bool) -> None:
    arguments = {**BASE, "thought": text}
    if accepted:
        assert parse_command(arguments, max_thought_bytes=10).thought == text
    else:
        size = len(text.encode())
        assert refusal(arguments, max_thought_bytes=10) == (
            f"thought is {size} bytes, over the limit of 10 bytes; split it into several thoughts"
        )


# -- classify: what a thought is in the line of reasoning ------------------------------------


@pytest.mark.parametrize(
    ("extra", "known", "kind"),
    [
        ({}, (), "thought.recorded"),
        ({"is_revision": False}, (), "thought.recorded"),
        ({"is_revision": True, "revises_thought": 1}, (), "thought.revised"),
        ({"branch_from_thought": 1, "branch_id": "b"}, (), "branch.opened"),
        ({"branch_from_thought": 1, "branch_id": "b"}, ("b",), "branch.extended"),
        ({"branch_from_thought": 1, "branch_id": "c"}, ("b",), "branch.opened"),
        ({"branch_id": "orphan"}, (), "thought.recorded"),
        ({"branch_from_thought": 1}, (), "thought.recorded"),
        ({"is_revision": True, "branch_from_thought": 1, "branch_id": "b"}, (), "branch.opened"),
    ],
    ids=[
        "plain",
        "not-a-revision",
        "revision",
        "new-branch",
        "known-branch",
        "other-branch",
        "id-without-origin",
        "origin-without-id",
        "branch-wins-over-revision",
    ],
)
def test_a_thought_is_classified_by_its_revision_and_branch_fields(
    extra: dict[str, Any], known: tuple[str, ...], kind: str
) -> None:
    assert classify(command(2, **extra), known) == kind


# -- decide_thought: the events that record a command ----------------------------------------


def test_the_first_append_of_a_session_also_starts_it() -> None:
    events = decide_thought(
        command(), version=0, known_branches=(), metadata={"agent": "a"}, predecessor_id="old"
    )
    assert events == [
        SessionStarted(metadata={"agent": "a"}, predecessor_id="old"),
        ThoughtRecorded(
            thought="thought 1", thought_number=1, total_thoughts=3, next_thought_needed=True
        ),
    ]


def test_a_later_append_records_the_thought_alone() -> None:
    events = decide_thought(command(2), version=2, known_branches=(), metadata={"agent": "a"})
    assert [type(event) for event in events] == [ThoughtRecorded]


def test_a_number_above_the_estimate_raises_it_and_keeps_the_request() -> None:
    (event,) = decide_thought(command(5, total=3), version=4, known_branches=())
    assert isinstance(event, ThoughtRecorded)
    assert (event.thought_number, event.total_thoughts) == (5, 5)
    assert event.requested_total_thoughts == 3


@pytest.mark.parametrize(("number", "total"), [(3, 3), (2, 7)])
def test_an_estimate_at_or_above_the_number_is_kept_as_given(number: int, total: int) -> None:
    (event,) = decide_thought(command(number, total=total), version=4, known_branches=())
    assert isinstance(event, ThoughtRecorded)
    assert (event.total_thoughts, event.requested_total_thoughts) == (total, None)


def test_a_revision_of_a_thought_never_recorded_is_recorded_as_asked() -> None:
    # The official server accepts it; the ledger records what was said, not what it refers to.
    started, event = decide_thought(
        command(1, is_revision=True, revises_thought=7), version=0, known_branches=()
    )
    assert isinstance(started, SessionStarted)
    assert isinstance(event, ThoughtRevised)
    assert event.revises_thought == 7


def test_a_branch_from_its_own_number_opens_the_branch() -> None:
    (event,) = decide_thought(
        command(2, branch_from_thought=2, branch_id="self"), version=3, known_branches=()
    )
    assert isinstance(event, BranchOpened)
    assert (event.thought_number, event.branch_from_thought, event.branch_id) == (2, 2, "self")


def test_a_thought_in_a_known_branch_extends_it() -> None:
    (event,) = decide_thought(
        command(3, branch_from_thought=1, branch_id="b"), version=3, known_branches={"b"}
    )
    assert isinstance(event, BranchExtended)


def test_every_optional_fact_is_carried_into_the_event() -> None:
    (event,) = decide_thought(
        command(2, is_revision=True, revises_thought=1, needs_more_thoughts=True),
        version=2,
        known_branches=(),
    )
    assert isinstance(event, ThoughtRevised)
    assert (event.is_revision, event.revises_thought, event.needs_more_thoughts) == (True, 1, True)
    assert (event.branch_from_thought, event.branch_id) == (None, None)


@pytest.mark.parametrize(
    ("extra", "kind"),
    [
        ({}, "thought.recorded"),
        ({"is_revision": True, "revises_thought": 1}, "thought.revised"),
        ({"branch_from_thought": 1, "branch_id": "b"}, "branch.opened"),
    ],
)
def test_a_thought_a_model_wrote_is_one_event_carrying_its_kind(
    extra: dict[str, Any], kind: str
) -> None:
    (event,) = decide_thought(
        command(2, **extra),
        version=2,
        known_branches=(),
        generated=Generated(guidance="the problem", generation=GENERATION),
    )
    assert isinstance(event, ThoughtGenerated)
    assert (event.kind, event.guidance, event.generation) == (kind, "the problem", GENERATION)
    assert event.thought == "thought 2"
