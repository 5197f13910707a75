import asyncio
import hashlib
import json
from typing import Any

from thoughtledger.adapters.llm.answer import parse_answer
from thoughtledger.api.prompt import ThoughtPrompt, build_prompt, prompt_sha256
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.decide import ThinkCommand, parse_command
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.projections.state import SessionState, empty


def call(number: int, text: str = "", **extra: Any) -> ThinkCommand:
    return parse_command(
        {
            "thought": text or f"thought {number}",
            "thought_number": number,
            "total_thoughts": 5,
            "next_thought_needed": True,
            **extra,
        }
    )


def session(*commands: ThinkCommand) -> SessionState:
    """Record hand-written thoughts in a fresh in-memory ledger and return the session."""

    async def record() -> SessionState:
        ledger = Ledger(MemoryEventStore())
        for command in commands:
            await ledger.think("s", command)
        return await ledger.state("s")

    return asyncio.run(record())


def body(prompt: ThoughtPrompt) -> str:
    return prompt.messages(structured=True)[1][1]


def test_a_first_thought_is_the_problem_and_there_is_no_guidance() -> None:
    prompt = build_prompt(empty("s"), call(1, "How do I rate limit?"))
    assert "Problem:\nHow do I rate limit?" in body(prompt)
    assert "No thoughts yet." in body(prompt)
    assert "Guidance" not in body(prompt)
    assert prompt.context_version == 0


def test_later_thoughts_see_the_problem_the_history_and_the_guidance() -> None:
    state = session(call(1, "The problem"), call(2, "A first step"))
    prompt = build_prompt(state, call(3, "Focus on Redis"))
    text = body(prompt)
    assert text.index("Problem:\nThe problem") < text.index("[2] A first step")
    assert "Write thought 3 of about 5." in text
    assert text.endswith("Guidance for this thought:\nFocus on Redis")
    assert prompt.context_version == state.version


def test_revisions_and_branches_are_marked_and_only_the_active_branch_is_shown() -> None:
    state = session(
        call(1, "Problem"),
        call(2, "Step"),
        call(3, "Better step", is_revision=True, revises_thought=2),
        call(3, "On a", branch_from_thought=2, branch_id="a"),
        call(3, "On b", branch_from_thought=2, branch_id="b"),
    )
    on_a = body(build_prompt(state, call(4, "more a", branch_from_thought=2, branch_id="a")))
    assert "[3] (revises thought 2) Better step" in on_a
    assert "[3] (branch 'a' from thought 2) On a" in on_a
    assert "On b" not in on_a
    assert "Other branches, not shown: b" in on_a
    assert "It belongs to branch 'a'" in on_a
    main = body(build_prompt(state, call(4, "main")))
    assert "On a" not in main
    assert "On b" not in main


def test_the_task_says_what_kind_of_thought_to_write() -> None:
    state = session(call(1, "Problem"))
    revision = body(build_prompt(state, call(2, "g", is_revision=True, revises_thought=1)))
    assert "It revises thought 1" in revision
    last = body(build_prompt(state, call(2, "g", next_thought_needed=False)))
    assert "It is the last thought: conclude." in last


def test_the_prompt_is_bounded_and_keeps_the_first_and_latest_thoughts() -> None:
    commands = [call(1, "P" * 50)] + [call(n, f"thought {n} " + "x" * 900) for n in range(2, 60)]
    prompt = build_prompt(session(*commands), call(60, "g" * 10_000), max_chars=6_000)
    text = body(prompt)
    assert len(text) < 7_000
    assert "[1] " in text
    assert "[59] thought 59" in text
    assert "thoughts omitted)" in text
    assert "[...]" in text


def test_the_same_state_and_call_give_the_same_prompt_byte_for_byte() -> None:
    state = session(call(1, "Problem"), call(2, "Step"))
    first = build_prompt(state, call(3, "g")).messages(structured=True)
    again = build_prompt(state, call(3, "g")).messages(structured=True)
    assert prompt_sha256(first) == prompt_sha256(again)


def test_the_prompt_hash_is_sha256_of_the_messages_as_sorted_compact_json() -> None:
    messages = ThoughtPrompt("body é", 0).messages(structured=False)
    expected = json.dumps(
        [{"role": role, "content": content} for role, content in messages],
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )
    assert prompt_sha256(messages) == hashlib.sha256(expected.encode()).hexdigest()


def test_structured_and_plain_prompts_ask_for_different_answers() -> None:
    prompt = ThoughtPrompt("b", 0)
    assert "JSON" in prompt.messages(structured=True)[0][1]
    assert "JSON" not in prompt.messages(structured=False)[0][1]


# -- reading answers ---------------------------------------------------------------------------


def test_a_structured_answer_gives_thought_confidence_and_hint() -> None:
    answer = '{"thought": " T ", "confidence": 0.75, "reasoning_hint": "next"}'
    assert parse_answer(answer, structured=True) == ("T", 0.75, "next", True)


def test_a_fenced_structured_answer_is_read() -> None:
    answer = '```json\n{"thought": "T", "confidence": 1}\n```'
    assert parse_answer(answer, structured=True) == ("T", 1.0, None, True)


def test_confidence_off_the_scale_is_absent_not_guessed() -> None:
    for confidence in ("85", 85, -0.1, True, None, float("nan")):
        answer = json.dumps({"thought": "T", "confidence": confidence})
        assert parse_answer(answer, structured=True)[1] is None


def test_an_answer_that_is_not_the_json_asked_for_is_plain_text() -> None:
    for answer in ("Just prose.", '{"answer": "x"}', "[1, 2]", '{"thought": ""}'):
        assert parse_answer(answer, structured=True) == (answer, None, None, False)


def test_plain_mode_takes_even_json_as_text() -> None:
    answer = '{"thought": "T", "confidence": 0.5}'
    assert parse_answer(answer, structured=False) == (answer, None, None, False)
