"""``think_external`` end to end: the real client against a real OpenAI-compatible HTTP server.

The server (:mod:`tests.support.llm_server`) runs on 127.0.0.1 inside the test and answers from a
script: successes, 429s, 500s, hangs, malformed bodies. Nothing reaches the internet.
"""

import json
import re
import sys

import anyio
import pytest

from tests.support.external import call
from tests.support.llm_server import (
    FakeLLM,
    completion,
    structured,
)
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.llm.config import LLMSettings
from thoughtledger.adapters.llm.external import think_external
from thoughtledger.api import (
    DEFAULT_MAX_PROMPT_CHARS,
    PROMPT_VERSION,
    GenerationError,
    ProviderNotConfiguredError,
    ThoughtPrompt,
    WrittenThought,
    build_prompt,
    prompt_sha256,
)
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.decide import ThinkCommand
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import ThoughtGenerated, ThoughtRecorded
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.projections.asof import as_of_version

pytestmark = pytest.mark.anyio


async def rebuilt_hashes(
    ledger: Ledger,
    session_id: str,
    version: int,
    *,
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
) -> set[str]:
    """The hashes of the prompt rebuilt from the log for the model-written thought at ``version``.

    Rebuilt from the session as of the recorded ``context_version`` and the thought's own fields,
    as the model was asked; one hash for each answer mode (structured and plain).
    """
    state = await ledger.state(session_id)
    entry = next(t for t in state.thoughts if t.version == version)
    generation = entry.generation
    assert generation is not None
    assert entry.guidance is not None
    assert generation.prompt_version == PROMPT_VERSION
    assert generation.context_version < version
    request = ThinkCommand(
        thought=entry.guidance,
        thought_number=entry.thought_number,
        total_thoughts=entry.total_thoughts,
        next_thought_needed=entry.next_thought_needed,
        is_revision=entry.is_revision,
        revises_thought=entry.revises_thought,
        branch_from_thought=entry.branch_from_thought,
        branch_id=entry.branch_id,
        needs_more_thoughts=entry.needs_more_thoughts,
    )
    context = as_of_version(state, generation.context_version)
    prompt = build_prompt(context, request, max_chars=max_prompt_chars)
    return {prompt_sha256(prompt.messages(structured=mode)) for mode in (True, False)}


async def test_a_multi_step_session_is_written_by_the_model_and_recorded_on_every_backend(
    store: LedgerStore, llm: FakeLLM, writer: LLMWriter
) -> None:
    ledger = Ledger(store)
    llm.queue(
        structured("Counters must be shared.", 0.9, "Pick a store", prompt_tokens=40),
        structured("Redis INCR with a TTL.", 0.8, "Handle bursts", completion_tokens=12),
        structured("Token buckets smooth bursts.", 0.7, "Done"),
    )
    problem = "How do I rate limit a distributed system?"
    first = await think_external(ledger, "design", call(1, problem), writer=writer, model="gpt-4o")
    second = await think_external(ledger, "design", call(2, "Focus on Redis"), writer=writer)
    third = await think_external(
        ledger, "design", call(3, "Bursts?"), writer=writer, temperature=0.2
    )

    state = third.state
    assert [t.thought for t in state.thoughts] == [
        "Counters must be shared.",
        "Redis INCR with a TTL.",
        "Token buckets smooth bursts.",
    ]
    assert [t.guidance for t in state.thoughts] == [problem, "Focus on Redis", "Bursts?"]
    assert state.original_query == problem
    assert state.status == "complete"
    generations = [t.generation for t in state.thoughts]
    assert all(g is not None for g in generations)
    one, two, three = (g for g in generations if g is not None)
    assert (one.model, one.provider, one.temperature, one.prompt_tokens) == (
        "gpt-4o",
        "local",
        0.7,
        40,
    )
    assert (one.confidence, one.reasoning_hint, one.structured) == (0.9, "Pick a store", True)
    assert (two.model, two.completion_tokens, two.context_version) == (
        "gpt-5",
        12,
        first.state.version,
    )
    assert (three.temperature, three.context_version) == (0.2, second.state.version)
    assert [body["model"] for body in llm.bodies] == ["gpt-4o", "gpt-5", "gpt-5"]
    assert [body["temperature"] for body in llm.bodies] == [0.7, 0.7, 0.2]
    assert all(body["response_format"]["type"] == "json_schema" for body in llm.bodies)
    stored = await ledger.events("design")
    assert [r.event_type for r in stored] == ["session.started"] + ["thought.generated"] * 3
    assert (await ledger.verify("design")).ok


async def test_the_recorded_hash_matches_the_prompt_sent_and_the_prompt_rebuilt_from_the_log(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(structured("One."), structured("Two."), completion("Three, in plain text."))
    calls = [
        call(1, "Problem", total=2),
        call(2, "g2", total=2),
        call(3, "g3", total=3, is_revision=True, revises_thought=2),
    ]
    for arguments in calls:
        outcome = await think_external(ledger, "s", arguments, writer=writer)
    for entry, body in zip(outcome.state.thoughts, llm.bodies, strict=True):
        assert entry.generation is not None
        sent = [(m["role"], m["content"]) for m in body["messages"]]
        assert entry.generation.prompt_sha256 == prompt_sha256(sent)
        assert entry.generation.prompt_sha256 in await rebuilt_hashes(ledger, "s", entry.version)


async def test_an_audit_notices_a_prompt_hash_that_does_not_match(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(structured("One."))
    await think_external(ledger, "s", call(1, "A long problem. " * 40), writer=writer)
    state = await ledger.state("s")
    recorded = state.thoughts[0].generation
    assert recorded is not None
    assert recorded.prompt_sha256 in await rebuilt_hashes(ledger, "s", 2)
    # Built with another bound, the prompt differs: the audit says so.
    assert recorded.prompt_sha256 not in await rebuilt_hashes(ledger, "s", 2, max_prompt_chars=100)
    # Event 1 opened the session: it is not a thought a model wrote.
    assert [t.version for t in state.thoughts] == [2]


async def test_the_prompt_carries_the_problem_the_history_and_the_guidance(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(structured("Shared counters."), structured("Use Redis."))
    await think_external(ledger, "s", call(1, "Rate limiting?"), writer=writer)
    await think_external(ledger, "s", call(2, "Focus on Redis"), writer=writer)
    system, user = llm.bodies[1]["messages"]
    assert system["role"] == "system"
    assert "JSON" in system["content"]
    assert "Problem:\nRate limiting?" in user["content"]
    assert "[1] Shared counters." in user["content"]
    assert user["content"].endswith("Guidance for this thought:\nFocus on Redis")


async def test_token_usage_and_the_providers_cost_are_recorded(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(
        structured(
            "Thought.",
            model="openai/gpt-4o-2024-08-06",
            prompt_tokens=123,
            completion_tokens=45,
            usage_extra={"cost": 0.00042},
        )
    )
    outcome = await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    generation = outcome.entry.generation
    assert generation is not None
    assert (generation.prompt_tokens, generation.completion_tokens) == (123, 45)
    assert generation.cost == 0.00042
    assert generation.served_model == "openai/gpt-4o-2024-08-06"
    assert generation.response_id == "chatcmpl-test"
    assert generation.latency_ms >= 0
    stored = (await ledger.events("s"))[-1]
    assert isinstance(stored.event, ThoughtGenerated)
    assert json.loads(stored.payload)["generation"]["prompt_tokens"] == 123


async def test_manual_mode_records_the_callers_thought_and_asks_no_model(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    outcome = await think_external(
        ledger, "s", call(1, "My own thought"), writer=writer, use_llm=False
    )
    assert outcome.entry.thought == "My own thought"
    assert outcome.entry.generation is None
    assert isinstance((await ledger.events("s"))[-1].event, ThoughtRecorded)
    assert llm.bodies == []


async def test_missing_keys_fail_with_the_mcp_api_references_messages_before_any_request_or_append(
    ledger: Ledger, llm: FakeLLM
) -> None:
    async with LLMWriter(environ={"OPENROUTER_API_KEY": "or-key"}) as writer:
        with pytest.raises(ProviderNotConfiguredError) as openai_missing:
            await think_external(ledger, "s", call(1, "P"), writer=writer, model="gpt-4o")
    async with LLMWriter(environ={"OPENAI_API_KEY": "sk-key"}) as writer:
        with pytest.raises(ProviderNotConfiguredError) as openrouter_missing:
            await think_external(ledger, "s", call(1, "P"), writer=writer, model="opus")
    assert str(openai_missing.value).startswith("OpenAI API key not configured")
    assert str(openrouter_missing.value).startswith("OpenRouter API key not configured")
    assert llm.bodies == []
    assert await ledger.head("s") is None


async def test_openai_and_openrouter_endpoints_get_their_keys_and_model_names(
    ledger: Ledger, llm: FakeLLM
) -> None:
    environ = {
        "OPENAI_API_KEY": "sk-openai",
        "OPENAI_BASE_URL": llm.base_url,
        "OPENROUTER_API_KEY": "sk-openrouter",
        "OPENROUTER_BASE_URL": llm.base_url,
        "THOUGHTLEDGER_LLM_MODEL_SONNET": "anthropic/claude-sonnet-4",
    }
    llm.queue(structured("From OpenAI."), structured("From OpenRouter."))
    async with LLMWriter(environ=environ) as writer:
        one = await think_external(ledger, "s", call(1, "P"), writer=writer, model="gpt-4o")
        two = await think_external(ledger, "s", call(2, "g"), writer=writer, model="sonnet")
    assert [h["authorization"] for h in llm.headers] == ["Bearer sk-openai", "Bearer sk-openrouter"]
    assert llm.headers[1]["x-title"] == "thoughtledger"
    assert [b["model"] for b in llm.bodies] == ["gpt-4o", "anthropic/claude-sonnet-4"]
    assert one.entry.generation is not None
    assert two.entry.generation is not None
    assert (one.entry.generation.provider, two.entry.generation.provider) == (
        "openai",
        "openrouter",
    )


async def test_without_a_writer_the_environment_configures_one(
    ledger: Ledger, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THOUGHTLEDGER_LLM_BASE_URL", llm.base_url)
    monkeypatch.setenv("THOUGHTLEDGER_LLM_MODEL_NORMAL", "llama3.2")
    llm.queue(structured("Local thought."))
    outcome = await think_external(ledger, "s", call(1, "Problem"))
    assert outcome.entry.thought == "Local thought."
    assert llm.bodies[0]["model"] == "llama3.2"
    assert llm.headers[0]["authorization"] == "Bearer no-key"


async def test_revisions_and_branches_written_by_the_model_are_classified_as_asked(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(*[structured(f"T{n}") for n in range(4)])
    await think_external(ledger, "s", call(1, "P", total=4), writer=writer)
    await think_external(ledger, "s", call(2, "g", total=4), writer=writer)
    revised = await think_external(
        ledger, "s", call(3, "fix", total=4, is_revision=True, revises_thought=2), writer=writer
    )
    branched = await think_external(
        ledger, "s", call(3, "alt", total=4, branch_from_thought=2, branch_id="b"), writer=writer
    )
    assert revised.entry.kind == "thought.revised"
    assert revised.entry.status == "revision"
    assert branched.entry.kind == "branch.opened"
    assert list(branched.state.branches) == ["b"]
    assert "It revises thought 2" in llm.bodies[2]["messages"][1]["content"]
    assert "It belongs to branch 'b'" in llm.bodies[3]["messages"][1]["content"]


async def test_a_thought_too_large_to_record_is_a_generation_error_and_nothing_is_appended(
    llm: FakeLLM, writer: LLMWriter
) -> None:
    ledger = Ledger(MemoryEventStore(), max_thought_bytes=100)
    llm.queue(structured("x" * 500))
    with pytest.raises(GenerationError, match="cannot be recorded"):
        await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    assert await ledger.head("s") is None


@pytest.mark.parametrize("temperature", [-0.1, 2.5, float("nan"), True])
async def test_a_temperature_outside_0_to_2_is_refused_before_asking(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter, temperature: float
) -> None:
    with pytest.raises(InvalidInputError, match="temperature"):
        await think_external(ledger, "s", call(1, "P"), writer=writer, temperature=temperature)
    assert llm.bodies == []


async def test_a_cleared_session_gives_the_model_a_fresh_start(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(structured("Old."), structured("New."))
    await think_external(ledger, "s", call(1, "Old problem"), writer=writer)
    outcome = await think_external(ledger, "s", call(1, "New problem"), writer=writer, clear=True)
    assert outcome.session_id != "s"
    assert outcome.replaced_session_id == "s"
    assert "Problem:\nNew problem" in llm.bodies[1]["messages"][1]["content"]
    assert "Old." not in llm.bodies[1]["messages"][1]["content"]
    assert outcome.entry.generation is not None
    assert outcome.entry.generation.context_version == 0


class Gate:
    """A writer that lets no model answer until every caller is writing (then uses the real one)."""

    def __init__(self, inner: LLMWriter, parties: int) -> None:
        self.inner = inner
        self.parties = parties
        self.everyone_in = anyio.Event()

    async def write(
        self, prompt: ThoughtPrompt, *, model: str | None, temperature: float | None
    ) -> WrittenThought:
        self.parties -= 1
        if self.parties == 0:
            self.everyone_in.set()
        with anyio.fail_after(10):
            await self.everyone_in.wait()
        return await self.inner.write(prompt, model=model, temperature=temperature)


async def test_thoughts_written_concurrently_on_one_session_are_both_recorded_with_what_they_saw(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(structured("First."), structured("A."), structured("B."))
    await think_external(ledger, "s", call(1, "Problem", total=3), writer=writer)
    gate = Gate(writer, parties=2)

    async def think(guidance: str) -> None:
        await think_external(ledger, "s", call(2, guidance, total=3), writer=gate)

    async with anyio.create_task_group() as group:
        group.start_soon(think, "left")
        group.start_soon(think, "right")
    state = await ledger.state("s")
    late = state.thoughts[1:]
    assert sorted(t.guidance or "" for t in late) == ["left", "right"]
    assert [t.version for t in late] == [3, 4]
    for entry in late:
        assert entry.generation is not None
        assert entry.generation.context_version == 2
        assert entry.generation.prompt_sha256 in await rebuilt_hashes(ledger, "s", entry.version)


async def test_without_the_openai_package_the_error_says_what_to_install(
    ledger: Ledger, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # what an import of a missing package sees
    async with LLMWriter(LLMSettings(local_base_url=llm.base_url)) as writer:
        with pytest.raises(GenerationError, match=re.escape("thoughtledger[llm]")):
            await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    assert await ledger.head("s") is None


async def test_usage_per_model_adds_up_what_every_session_recorded(
    store: LedgerStore, llm: FakeLLM, writer: LLMWriter
) -> None:
    ledger = Ledger(store)
    llm.queue(
        structured("A.", prompt_tokens=10, completion_tokens=1),
        structured("B.", prompt_tokens=20, completion_tokens=2, usage_extra={"cost": 0.5}),
        structured("C.", prompt_tokens=5, completion_tokens=5),
    )
    await think_external(ledger, "one", call(1, "P"), writer=writer, model="mini")
    await think_external(ledger, "one", call(2, "g"), writer=writer, model="mini")
    await think_external(ledger, "two", call(1, "P"), writer=writer, model="llama3")
    await ledger.think("two", call(2, "by hand"))
    mini, llama = await ledger.stats.model_usage(page=2)
    assert (mini.model, mini.thoughts, mini.prompt_tokens, mini.completion_tokens) == (
        "gpt-5-mini",
        2,
        30,
        3,
    )
    assert mini.cost == 0.5
    assert (llama.model, llama.thoughts, llama.cost) == ("llama3", 1, None)
    later = await ledger.stats.model_usage(since=(await ledger.events("two"))[-1].recorded_at)
    assert later == []
