"""The answers callers read (``projections.answers``), from states folded from hand-made events."""

from typing import Any

import pytest

from tests.support.factories import GENERATION, START, STEP, fold, started
from tests.support.samples import thought
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.events import (
    BranchExtended,
    BranchOpened,
    LedgerEvent,
    SessionCleared,
    ThoughtGenerated,
    ThoughtRecorded,
    ThoughtRevised,
)
from thoughtledger.projections.answers import (
    branch_sets,
    external_view,
    generation_record,
    history_item,
    minimal_response,
    official_view,
    session_view,
    status_view,
    thought_history,
    thought_record,
)
from thoughtledger.projections.state import SessionState, empty

PLAIN = ThoughtRecorded(**thought(1, 4))
REVISION = ThoughtRevised(**thought(2, 4, is_revision=True, revises_thought=1))
OPENED = BranchOpened(**thought(2, 4, branch_from_thought=1, branch_id="b"))
EXTENDED = BranchExtended(**thought(3, 4, branch_from_thought=1, branch_id="b"))
GENERATED = ThoughtGenerated(
    **thought(2, 4), kind="thought.recorded", guidance="the problem", generation=GENERATION
)
FINAL = ThoughtRecorded(**thought(3, 3, more=False, needs_more_thoughts=False))

KINDS: list[tuple[LedgerEvent, str, dict[str, Any]]] = [
    (PLAIN, "recorded", {}),
    (REVISION, "revision", {"isRevision": True, "revisesThought": 1}),
    (OPENED, "branch", {"branchFromThought": 1, "branchId": "b"}),
    (GENERATED, "recorded", {}),
    (FINAL, "complete", {"needsMoreThoughts": False}),
]
KIND_IDS = ["recorded", "revised", "branch", "generated", "final"]


def last_of(*events: LedgerEvent) -> SessionState:
    return fold(started(), *events)


# -- the official server's answers -----------------------------------------------------------


def test_the_minimal_response_is_exactly_the_four_flow_control_keys() -> None:
    entry = last_of(PLAIN).thoughts[0]
    assert minimal_response(entry) == {
        "thought": "thought 1",
        "thoughtNumber": 1,
        "totalThoughts": 4,
        "nextThoughtNeeded": True,
    }


def test_before_any_thought_the_official_view_is_zeros_and_wants_a_thought() -> None:
    assert official_view(empty("s")) == {
        "thoughtNumber": 0,
        "totalThoughts": 0,
        "nextThoughtNeeded": True,
        "branches": [],
        "thoughtHistoryLength": 0,
    }


def test_the_official_view_reads_the_last_thought_and_counts_every_thought() -> None:
    state = last_of(
        PLAIN, OPENED, ThoughtRecorded(**thought(2, 4, branch_from_thought=1)), EXTENDED
    )
    assert official_view(state) == {
        "thoughtNumber": 3,
        "totalThoughts": 4,
        "nextThoughtNeeded": True,
        "branches": ["b"],
        "thoughtHistoryLength": 4,
    }


def test_branches_are_listed_in_the_order_first_seen() -> None:
    later = BranchOpened(**thought(2, 4, branch_from_thought=1, branch_id="a"))
    assert official_view(last_of(PLAIN, OPENED, later, EXTENDED))["branches"] == ["b", "a"]


# -- the session pattern ---------------------------------------------------------------------


def test_a_summary_appears_once_no_thought_is_needed() -> None:
    assert "summary" not in session_view(last_of(PLAIN, OPENED))
    view = session_view(last_of(PLAIN, OPENED, FINAL))
    assert view["summary"] == (
        "Sequential thinking complete: 3 thoughts processed across 1 branches."
    )


def test_a_history_window_shows_the_latest_thoughts_and_counts_them_all() -> None:
    view = session_view(last_of(PLAIN, REVISION, OPENED), history_window=2)
    assert [item["thoughtNumber"] for item in view["thoughtHistory"]] == [2, 2]
    assert view["thoughtHistory"][0]["isRevision"] is True
    assert view["thoughtHistoryLength"] == 3
    assert view["sessionId"] == "s"


def test_a_window_wider_than_the_history_shows_it_all() -> None:
    view = session_view(last_of(PLAIN, REVISION), history_window=10)
    assert len(view["thoughtHistory"]) == 2


@pytest.mark.parametrize(("event", "status", "related"), KINDS, ids=KIND_IDS)
def test_a_history_item_keeps_the_relations_given_and_leaves_out_the_rest(
    event: LedgerEvent, status: str, related: dict[str, Any]
) -> None:
    entry = last_of(event).thoughts[0]
    assert history_item(entry) == {
        "thoughtNumber": entry.thought_number,
        "thought": f"thought {entry.thought_number}",
        **related,
    }


# -- the MCP API reference's answers ---------------------------------------------------------


@pytest.mark.parametrize(("event", "status", "related"), KINDS, ids=KIND_IDS)
def test_the_status_says_what_the_last_thought_was(
    event: LedgerEvent, status: str, related: dict[str, Any]
) -> None:
    assert status_view(last_of(event), session_id_shown=False)["status"] == status


def test_before_any_thought_the_status_view_is_zeros_and_recorded() -> None:
    assert status_view(empty("s"), session_id_shown=True) == {
        "thought_number": 0,
        "total_thoughts": 0,
        "next_thought_needed": True,
        "branches": [],
        "thought_history_length": 0,
        "status": "recorded",
        "session_id": "s",
    }


def test_the_session_id_is_shown_only_when_asked() -> None:
    state = last_of(PLAIN)
    assert "session_id" not in status_view(state, session_id_shown=False)
    entry = state.thoughts[0]
    assert "session_id" not in external_view(state, entry, session_id_shown=False)
    assert external_view(state, entry, session_id_shown=True)["session_id"] == "s"


def test_the_external_view_says_thinking_where_the_status_view_says_recorded() -> None:
    state = last_of(PLAIN)
    assert external_view(state, state.thoughts[0], session_id_shown=False) == {
        "thought_number": 1,
        "total_thoughts": 4,
        "next_thought_needed": True,
        "thought_content": "thought 1",
        "branches": [],
        "thought_history_length": 1,
        "status": "thinking",
    }


@pytest.mark.parametrize(("event", "status", "related"), KINDS[1:], ids=KIND_IDS[1:])
def test_the_external_view_keeps_every_other_status(
    event: LedgerEvent, status: str, related: dict[str, Any]
) -> None:
    state = last_of(event)
    expected = "thinking" if status == "recorded" else status
    assert external_view(state, state.thoughts[0], session_id_shown=False)["status"] == expected


def test_the_external_view_names_the_model_that_wrote_a_thought() -> None:
    state = last_of(GENERATED)
    view = external_view(state, state.thoughts[0], session_id_shown=False)
    assert view["model_used"] == "m"
    assert "confidence" not in view
    assert "reasoning_hint" not in view


def test_the_served_model_confidence_and_hint_are_shown_when_the_model_gave_them() -> None:
    generation = GENERATION.model_copy(
        update={"served_model": "m-2024", "confidence": 0.0, "reasoning_hint": "check"}
    )
    event = GENERATED.model_copy(update={"generation": generation})
    state = last_of(event)
    view = external_view(state, state.thoughts[0], session_id_shown=False)
    assert (view["model_used"], view["confidence"], view["reasoning_hint"]) == (
        "m-2024",
        0.0,
        "check",
    )


# -- branches and the full record ------------------------------------------------------------


def test_branch_sets_list_each_branch_with_its_origin_and_thoughts() -> None:
    state = last_of(PLAIN, OPENED, REVISION, EXTENDED)
    assert branch_sets(state) == [
        {
            "branchId": "b",
            "fromThought": 1,
            "thoughts": [
                {"thoughtNumber": 2, "thought": "thought 2", "version": 3},
                {"thoughtNumber": 3, "thought": "thought 3", "version": 5},
            ],
        }
    ]


def test_no_branches_make_no_branch_sets() -> None:
    assert branch_sets(last_of(PLAIN, REVISION)) == []


@pytest.mark.parametrize(("event", "status", "related"), KINDS, ids=KIND_IDS)
def test_a_thought_record_carries_every_field_it_was_recorded_with(
    event: LedgerEvent, status: str, related: dict[str, Any]
) -> None:
    entry = last_of(event).thoughts[0]
    record = thought_record(entry)
    expected: dict[str, Any] = {
        "version": 2,
        "recordedAt": format_time(START + STEP),
        "kind": entry.kind,
        "status": status,
        "thoughtNumber": entry.thought_number,
        "totalThoughts": entry.total_thoughts,
        "nextThoughtNeeded": entry.next_thought_needed,
        "thought": entry.thought,
        **related,
    }
    if event is GENERATED:
        expected |= {"guidance": "the problem", "generation": generation_record(GENERATION)}
    assert record == expected


def test_thought_history_records_every_thought_in_order() -> None:
    state = last_of(PLAIN, REVISION, SessionCleared(reason="done"))
    assert [item["version"] for item in thought_history(state)] == [2, 3]


def test_a_generation_record_is_camel_case_without_the_figures_not_given() -> None:
    assert generation_record(GENERATION) == {
        "model": "m",
        "provider": "local",
        "promptSha256": "0" * 64,
        "promptVersion": 1,
        "contextVersion": 1,
        "structured": True,
        "latencyMs": 5,
        "attempts": 1,
    }
    full = GENERATION.model_copy(
        update={
            "served_model": "m-1",
            "temperature": 0.0,
            "prompt_tokens": 0,
            "completion_tokens": 2,
            "cost": 0.0,
            "finish_reason": "stop",
            "response_id": "r",
            "confidence": 1.0,
            "reasoning_hint": "h",
        }
    )
    assert generation_record(full) == {
        **generation_record(GENERATION),
        "servedModel": "m-1",
        "temperature": 0.0,
        "promptTokens": 0,
        "completionTokens": 2,
        "cost": 0.0,
        "finishReason": "stop",
        "responseId": "r",
        "confidence": 1.0,
        "reasoningHint": "h",
    }
