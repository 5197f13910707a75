"""``sequential_thinking_external`` through MCP, with a real model server on 127.0.0.1.

An in-memory MCP client calls the server, whose tool drives the real ``openai`` client against
the scripted OpenAI-compatible server of :mod:`tests.support.llm_server`. Nothing reaches the
internet.
"""

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest
from mcp import Client

from tests.support.llm_server import FakeLLM, error, fake_llm, structured
from tests.support.mcp import Json, Mode, call, event_count, refused
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.llm.config import LLMSettings
from thoughtledger.adapters.mcp import create_server
from thoughtledger.api import GENERATION_FAILED, InvalidInputError
from thoughtledger.api.service import Ledger

pytestmark = pytest.mark.anyio

TOOLS = ("sequential_thinking_external", "thinking_history")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


@asynccontextmanager
async def connect(ledger: Ledger, mode: Mode, llm: FakeLLM) -> AsyncIterator[Client]:
    settings = LLMSettings(local_base_url=llm.base_url, backoff=0, max_retries=1)
    async with LLMWriter(settings) as writer:
        server = create_server(ledger, tools=TOOLS, writer=writer)
        async with Client(server, mode=mode) as client:
            yield client


def step(number: int, thought: str, *, total: int = 3, **extra: object) -> Json:
    return {
        "thought": thought,
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": number < total,
        "session_id": "rate-limit-design",
        **extra,
    }


async def test_an_mcp_client_runs_a_multi_step_external_session(
    ledger: Ledger, mode: Mode, llm: FakeLLM
) -> None:
    llm.queue(
        structured("Counters must be shared across nodes.", 0.9, "Pick a shared store"),
        structured("Redis INCR with EXPIRE gives a fixed window.", 0.8, "Consider bursts"),
        structured("A token bucket in Lua smooths bursts.", 0.75, "Summarise"),
    )
    async with connect(ledger, mode, llm) as client:
        first = await call(
            client,
            "sequential_thinking_external",
            step(1, "How do I implement rate limiting in a distributed system?", model="gpt-4o"),
        )
        second = await call(
            client, "sequential_thinking_external", step(2, "Focus on Redis-based solutions")
        )
        third = await call(client, "sequential_thinking_external", step(3, "Handle bursts"))
        history = await call(client, "thinking_history", {"sessionId": "rate-limit-design"})
    assert first == {
        "thought_number": 1,
        "total_thoughts": 3,
        "next_thought_needed": True,
        "thought_content": "Counters must be shared across nodes.",
        "branches": [],
        "thought_history_length": 1,
        "status": "thinking",
        "session_id": "rate-limit-design",
        "model_used": "served-model",
        "confidence": 0.9,
        "reasoning_hint": "Pick a shared store",
    }
    assert second["thought_content"] == "Redis INCR with EXPIRE gives a fixed window."
    assert (third["status"], third["thought_history_length"]) == ("complete", 3)
    assert [body["model"] for body in llm.bodies] == ["gpt-4o", "gpt-5", "gpt-5"]
    assert "Focus on Redis-based solutions" in llm.bodies[1]["messages"][1]["content"]
    items = history["history"]
    assert [item["guidance"] for item in items] == [
        "How do I implement rate limiting in a distributed system?",
        "Focus on Redis-based solutions",
        "Handle bursts",
    ]
    assert items[0]["generation"]["model"] == "gpt-4o"
    assert items[0]["generation"]["promptTokens"] == 11
    assert items[0]["generation"]["temperature"] == 0.7
    state = await ledger.state("rate-limit-design")
    assert state.metadata["tool"] == "sequential_thinking_external"


async def test_manual_mode_over_mcp_records_the_callers_thought_without_a_model(
    ledger: Ledger, mode: Mode, llm: FakeLLM
) -> None:
    async with connect(ledger, mode, llm) as client:
        answer = await call(
            client, "sequential_thinking_external", step(1, "My own thought", use_llm=False)
        )
    assert answer["thought_content"] == "My own thought"
    assert "model_used" not in answer
    assert llm.bodies == []


async def test_a_failed_generation_is_a_tool_error_in_002s_words_and_appends_nothing(
    ledger: Ledger, mode: Mode, llm: FakeLLM
) -> None:
    llm.queue(error(500, "model crashed"), error(500, "model crashed again"))
    async with connect(ledger, mode, llm) as client:
        said = await refused(client, "sequential_thinking_external", step(1, "Problem"))
    assert (
        said == f"{GENERATION_FAILED}: 2 attempts failed; the last: HTTP 500: model crashed again"
    )
    assert await event_count(ledger) == 0


async def test_the_server_configures_its_model_from_the_environment(
    ledger: Ledger, mode: Mode, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THOUGHTLEDGER_LLM_BASE_URL", llm.base_url)
    monkeypatch.setenv("THOUGHTLEDGER_LLM_MODEL_MINI", "llama3.2:1b")
    llm.queue(structured("From the local model."))
    # As `thoughtledger serve` passes it: one client per lifespan, read from the environment.
    server = create_server(ledger, tools=TOOLS, open_writer=LLMWriter)
    async with Client(server, mode=mode) as client:
        answer = await call(client, "sequential_thinking_external", step(1, "P", model="mini"))
    assert answer["thought_content"] == "From the local model."
    assert llm.bodies[0]["model"] == "llama3.2:1b"


async def test_the_server_opens_one_model_client_per_lifespan_and_closes_it(
    ledger: Ledger, llm: FakeLLM
) -> None:
    settings = LLMSettings(local_base_url=llm.base_url, backoff=0, max_retries=0)
    opened: list[LLMWriter] = []
    closed: list[LLMWriter] = []

    @asynccontextmanager
    async def open_writer() -> AsyncIterator[LLMWriter]:
        async with LLMWriter(settings) as writer:
            opened.append(writer)
            yield writer
        closed.append(writer)

    llm.queue(structured("One."), structured("Two."))
    server = create_server(ledger, tools=TOOLS, open_writer=open_writer)
    for number, said in ((1, "One."), (2, "Two.")):
        async with Client(server) as client:
            answer = await call(client, "sequential_thinking_external", step(number, "P"))
        assert answer["thought_content"] == said
    assert len(opened) == 2
    assert opened == closed


async def test_a_server_takes_a_writer_or_a_way_to_open_one_not_both(ledger: Ledger) -> None:
    async with LLMWriter() as writer:
        with pytest.raises(InvalidInputError, match="writer or open_writer, not both"):
            create_server(ledger, tools=TOOLS, writer=writer, open_writer=LLMWriter)
