import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from thoughtledger.api.service import Ledger
from thoughtledger.ledger.codec import decode_payload, encode_payload
from thoughtledger.ledger.decide import Generated
from thoughtledger.ledger.events import PAYLOAD_SCHEMA_VERSION, Generation, ThoughtGenerated
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.projections.answers import external_view, thought_record
from thoughtledger.projections.state import SessionState
from thoughtledger.projections.usage import cost_note, generations, usage_by_model, usage_note

HASH = "ab" * 32


def generation(**changes: Any) -> Generation:
    fields: dict[str, Any] = {
        "model": "gpt-5",
        "provider": "openai",
        "prompt_sha256": HASH,
        "context_version": 0,
        "structured": True,
        "latency_ms": 100,
        "attempts": 1,
    }
    return Generation(**{**fields, **changes})


def call(number: int, text: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "thought": text or f"thought {number}",
        "thought_number": number,
        "total_thoughts": 3,
        "next_thought_needed": True,
        **extra,
    }


def record(*steps: tuple[dict[str, Any], Generated | None]) -> SessionState:
    async def run() -> SessionState:
        ledger = Ledger(MemoryEventStore())
        for arguments, generated in steps:
            await ledger.think("s", arguments, generated=generated)
        return await ledger.state("s")

    return asyncio.run(run())


def test_a_generated_branch_must_name_its_branch_and_origin() -> None:
    with pytest.raises(ValidationError, match="branch_id and branch_from_thought"):
        ThoughtGenerated(
            thought="t",
            thought_number=2,
            total_thoughts=2,
            next_thought_needed=True,
            kind="branch.opened",
            guidance="g",
            generation=generation(),
        )


def test_a_generated_thought_is_stored_without_its_unset_figures() -> None:
    event = ThoughtGenerated(
        thought="t",
        thought_number=1,
        total_thoughts=1,
        next_thought_needed=False,
        kind="thought.recorded",
        guidance="g",
        generation=generation(),
    )
    payload = encode_payload(event)
    assert "confidence" not in payload
    assert "prompt_tokens" not in payload
    assert decode_payload("thought.generated", PAYLOAD_SCHEMA_VERSION, payload) == event


def test_a_generated_thought_is_classified_like_a_hand_written_one() -> None:
    state = record(
        (call(1), Generated("problem", generation())),
        (call(2, is_revision=True, revises_thought=1), Generated("fix it", generation())),
        (call(3, branch_from_thought=1, branch_id="alt"), Generated("try", generation())),
        (call(3, branch_from_thought=1, branch_id="alt"), None),
    )
    assert [t.kind for t in state.thoughts] == [
        "thought.recorded",
        "thought.revised",
        "branch.opened",
        "branch.extended",
    ]
    assert [t.generated for t in state.thoughts] == [True, True, True, False]
    assert state.revisions == 1
    assert state.branches["alt"].versions == (4, 5)


def test_the_original_query_is_the_first_guidance_or_the_first_thought() -> None:
    assert record((call(1, "written"), Generated("the problem", generation()))).original_query == (
        "the problem"
    )
    assert record((call(1, "the problem"), None)).original_query == "the problem"
    assert SessionState("s").original_query is None


def test_the_external_view_names_the_model_and_what_it_said_of_itself() -> None:
    written = generation(served_model="gpt-5-2025-08-07", confidence=0.5, reasoning_hint="next")
    state = record((call(1, "text"), Generated("problem", written)))
    assert external_view(state, state.thoughts[0], session_id_shown=True) == {
        "thought_number": 1,
        "total_thoughts": 3,
        "next_thought_needed": True,
        "thought_content": "text",
        "branches": [],
        "thought_history_length": 1,
        "status": "thinking",
        "session_id": "s",
        "model_used": "gpt-5-2025-08-07",
        "confidence": 0.5,
        "reasoning_hint": "next",
    }


def test_the_external_view_leaves_out_what_nobody_said() -> None:
    state = record((call(1, "text", next_thought_needed=False), Generated("p", generation())))
    view = external_view(state, state.thoughts[0], session_id_shown=False)
    assert view["model_used"] == "gpt-5"
    assert view["status"] == "complete"
    assert "confidence" not in view
    assert "reasoning_hint" not in view
    assert "session_id" not in view
    manual = record((call(1, "mine"), None))
    assert "model_used" not in external_view(manual, manual.thoughts[0], session_id_shown=False)


def test_a_thought_record_carries_guidance_and_generation() -> None:
    state = record((call(1, "text"), Generated("problem", generation(prompt_tokens=5))))
    item = thought_record(state.thoughts[0])
    assert item["guidance"] == "problem"
    assert item["generation"] == {
        "model": "gpt-5",
        "provider": "openai",
        "promptSha256": HASH,
        "promptVersion": 1,
        "contextVersion": 0,
        "structured": True,
        "promptTokens": 5,
        "latencyMs": 100,
        "attempts": 1,
    }
    assert "generation" not in thought_record(record((call(1), None)).thoughts[0])


def test_usage_adds_up_per_model() -> None:
    items = [
        generation(prompt_tokens=10, completion_tokens=5, latency_ms=100, cost=0.01),
        generation(prompt_tokens=20, completion_tokens=5, latency_ms=300, attempts=3),
        generation(latency_ms=200, structured=False),
        generation(model="llama3", provider="local", prompt_tokens=1, latency_ms=50),
    ]
    gpt, llama = usage_by_model(items)
    assert (gpt.model, gpt.thoughts, gpt.prompt_tokens, gpt.completion_tokens) == (
        "gpt-5",
        3,
        30,
        10,
    )
    assert (gpt.unreported, gpt.attempts, gpt.structured, gpt.cost) == (1, 5, 2, 0.01)
    assert (gpt.latency_ms_p50, gpt.latency_ms_p95, gpt.latency_ms_max) == (200, 300, 300)
    assert (llama.provider, llama.thoughts, llama.cost) == ("local", 1, None)
    assert llama.as_json()["promptTokens"] == 1


def test_usage_reads_generations_from_recorded_events() -> None:
    async def run() -> list[Generation]:
        ledger = Ledger(MemoryEventStore())
        await ledger.think("s", call(1), generated=Generated("p", generation()))
        await ledger.think("s", call(2))
        return generations(await ledger.events("s"))

    assert asyncio.run(run()) == [generation()]


def test_a_cost_note_says_tokens_latency_price_and_retries() -> None:
    full = generation(prompt_tokens=40, completion_tokens=12, latency_ms=850, cost=0.00042)
    assert cost_note(full) == "40+12 tokens · 850 ms · $0.00042"
    retried = generation(latency_ms=90, attempts=3)
    assert cost_note(retried) == "tokens not reported · 90 ms · 3 attempts"


def test_a_usage_note_sums_up_a_model() -> None:
    (usage,) = usage_by_model(
        [generation(prompt_tokens=10, completion_tokens=2, latency_ms=80), generation()]
    )
    assert usage_note(usage) == (
        "gpt-5 (openai): 2 thoughts · 10+2 tokens · latency p50 80 ms, p95 100 ms"
        " · 1 without token figures"
    )
