"""``stream_with_writer``: the model's thought in pieces as it is written, then recorded once.

The real client streams from the loopback OpenAI-compatible server of
:mod:`tests.support.llm_server` (server-sent events, a pause between chunks).
"""

import contextlib
from collections.abc import AsyncGenerator
from dataclasses import replace

import pytest

from tests.support.external import Pauses, call
from tests.support.llm_server import FakeLLM, error, streamed
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.llm.external import think_external_stream as think_with_env
from thoughtledger.api import (
    GENERATION_FAILED,
    GenerationError,
    ThinkOutcome,
    ThoughtPrompt,
    WrittenThought,
    stream_with_writer,
)
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.events import Generation
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio

PIECES = ["First, ", "count requests ", 'per "client"; ', "then ", "cap them. ✓"]


async def collect(
    ledger: Ledger, writer: object, arguments: dict[str, object], session_id: str = "s"
) -> tuple[list[str], ThinkOutcome]:
    pieces: list[str] = []
    outcome: ThinkOutcome | None = None
    items = stream_with_writer(ledger, session_id, arguments, writer=writer)  # type: ignore[arg-type]  # the writers under test
    async with contextlib.aclosing(items):
        async for item in items:
            if isinstance(item, str):
                assert outcome is None  # every piece comes before the outcome
                pieces.append(item)
            else:
                outcome = item
    assert outcome is not None
    return pieces, outcome


async def read_into(pieces: list[str], items: AsyncGenerator[str | ThinkOutcome]) -> None:
    """Collect the pieces until the stream ends or fails (the outcome must not come)."""
    async with contextlib.aclosing(items):
        async for item in items:
            assert isinstance(item, str)
            pieces.append(item)


async def test_the_pieces_arrive_then_the_thought_is_recorded_once_on_every_backend(
    store: LedgerStore, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(streamed(PIECES, confidence=0.6, hint="Pick a window"))
    ledger = Ledger(store)
    pieces, outcome = await collect(ledger, writer, call(1, "Rate limiting?"))
    assert len(pieces) >= 2
    assert "".join(pieces) == "".join(PIECES) == outcome.entry.thought
    generation = outcome.entry.generation
    assert generation is not None
    assert (generation.confidence, generation.reasoning_hint) == (0.6, "Pick a window")
    assert (generation.structured, generation.completion_tokens) == (True, 7)
    assert llm.bodies[0]["stream"] is True
    assert llm.bodies[0]["stream_options"] == {"include_usage": True}
    state = await ledger.state("s")
    assert [entry.thought for entry in state.thoughts] == ["".join(PIECES)]


async def test_stopping_after_the_first_piece_records_nothing_and_closes_the_request(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(streamed([f"word{number} " for number in range(50)], delay=0.05))
    items = stream_with_writer(ledger, "s", call(1, "P"), writer=writer)
    async with contextlib.aclosing(items):
        async for item in items:
            assert isinstance(item, str)
            break
    assert await ledger.head("s") is None
    await llm.cut()
    assert llm.streams == {"finished": 0, "cut": 1}


async def test_a_thought_past_the_ledgers_limit_stops_the_stream_and_records_nothing(
    llm: FakeLLM, writer: LLMWriter
) -> None:
    ledger = Ledger(MemoryEventStore(), max_thought_bytes=64)
    llm.queue(streamed(["twenty bytes of text"] * 40, delay=0.01))
    with pytest.raises(GenerationError, match="over the limit of 64 bytes"):
        await collect(ledger, writer, call(1, "P"))
    assert await ledger.head("s") is None
    await llm.cut()
    assert llm.streams == {"finished": 0, "cut": 1}


async def test_a_failure_before_the_first_piece_is_retried(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter, pauses: Pauses
) -> None:
    overloaded = streamed([], events=('{"error": {"message": "overloaded"}}',))
    llm.queue(error(500, "busy"), overloaded, streamed(PIECES))
    pieces, outcome = await collect(ledger, writer, call(1, "P"))
    assert "".join(pieces) == outcome.entry.thought
    assert outcome.entry.generation is not None
    assert outcome.entry.generation.attempts == 3
    assert len(pauses.delays) == 2


async def test_a_stream_that_breaks_after_a_piece_fails_at_once_and_records_nothing(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    broken = streamed(PIECES, delay=0.01)
    llm.queue(replace(broken, break_after=3), streamed(PIECES))
    pieces: list[str] = []
    with pytest.raises(GenerationError, match="the stream broke after") as caught:
        await read_into(pieces, stream_with_writer(ledger, "s", call(1, "P"), writer=writer))
    assert f"after {len(''.join(pieces))} characters: connection lost" in str(caught.value)
    assert pieces  # the pieces before the break were given
    assert caught.value.attempts == 1  # what was given cannot be taken back: no retry
    assert len(llm.bodies) == 1
    assert await ledger.head("s") is None


async def test_an_answer_that_is_not_the_json_asked_for_is_streamed_as_plain_text(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(streamed(["  Just ", "plain ", "text.\n"], plain=True))
    pieces, outcome = await collect(ledger, writer, call(1, "P"))
    assert "".join(pieces) == outcome.entry.thought == "Just plain text."
    assert outcome.entry.generation is not None
    assert outcome.entry.generation.structured is False


async def test_a_writer_that_cannot_stream_gives_its_thought_in_one_piece(ledger: Ledger) -> None:
    class Whole:
        async def write(
            self, prompt: ThoughtPrompt, *, model: str | None, temperature: float | None
        ) -> WrittenThought:
            generation = Generation(
                model="m",
                provider="local",
                prompt_sha256="0" * 64,
                context_version=prompt.context_version,
                structured=False,
                latency_ms=1,
                attempts=1,
            )
            return WrittenThought("Whole thought.", generation)

    pieces, outcome = await collect(ledger, Whole(), call(1, "P"))
    assert pieces == ["Whole thought."]
    assert outcome.entry.thought == "Whole thought."


async def test_the_top_level_stream_reads_its_model_from_the_environment(
    ledger: Ledger, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THOUGHTLEDGER_LLM_BASE_URL", llm.base_url)
    llm.queue(streamed(PIECES))
    seen: list[str | ThinkOutcome] = []
    async with contextlib.aclosing(think_with_env(ledger, "s", call(1, "P"))) as items:
        seen.extend([item async for item in items])
    assert isinstance(seen[-1], ThinkOutcome)
    assert "".join(item for item in seen if isinstance(item, str)) == "".join(PIECES)


async def test_a_refused_model_fails_in_002s_words_and_records_nothing(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(error(401, "Incorrect API key provided"))
    with pytest.raises(GenerationError, match=f"^{GENERATION_FAILED}: HTTP 401"):
        await collect(ledger, writer, call(1, "P"))
    assert await ledger.head("s") is None
