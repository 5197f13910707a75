"""``think_external`` against a misbehaving provider: retries, refusals and answer modes."""

import re

import pytest

from tests.support.external import Pauses, call
from tests.support.llm_server import (
    FakeLLM,
    Reply,
    completion,
    error,
    hang,
    malformed,
    structured,
)
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.llm.config import LLMSettings
from thoughtledger.adapters.llm.external import think_external
from thoughtledger.api import GENERATION_FAILED, GenerationError
from thoughtledger.api.service import Ledger

pytestmark = pytest.mark.anyio


async def test_429s_500s_timeouts_and_malformed_bodies_are_retried_until_one_succeeds(
    ledger: Ledger, llm: FakeLLM, pauses: Pauses
) -> None:
    # The timeout is for the hang() only: short enough to keep the test quick, long enough that
    # a loaded machine does not turn the 429 before it into a timeout as well.
    settings = LLMSettings(local_base_url=llm.base_url, timeout=2.0, backoff=0.25, max_retries=5)
    llm.queue(
        error(429, "slow down", **{"retry-after": "7"}),
        error(500, "boom"),
        hang(),
        malformed(),
        completion(None),
        structured("Finally."),
    )
    async with LLMWriter(settings, sleep=pauses) as writer:
        outcome = await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    assert outcome.entry.thought == "Finally."
    assert outcome.entry.generation is not None
    assert outcome.entry.generation.attempts == 6
    assert len(llm.bodies) == 6
    assert len(pauses.delays) == 5
    # Retry-After is honoured; otherwise the backoff doubles (with jitter in [50%, 100%]).
    assert pauses.delays[0] == 7
    for retry, delay in enumerate(pauses.delays[1:], start=2):
        assert 0.25 * 2 ** (retry - 1) * 0.5 <= delay <= 0.25 * 2 ** (retry - 1)


async def test_when_every_attempt_fails_the_error_is_clear_and_nothing_is_appended(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(structured("First."))
    await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    before = await ledger.events("s")
    llm.queue(*[error(503, "upstream overloaded")] * 4)
    with pytest.raises(GenerationError) as caught:
        await think_external(ledger, "s", call(2, "Go on"), writer=writer)
    message = str(caught.value)
    assert message.startswith(f"{GENERATION_FAILED}: 4 attempts failed")
    assert "HTTP 503: upstream overloaded" in message
    assert (caught.value.status, caught.value.attempts) == (503, 4)
    assert await ledger.events("s") == before


async def test_a_failing_first_thought_leaves_no_session_behind(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(*[malformed()] * 4)
    with pytest.raises(GenerationError, match="malformed answer"):
        await think_external(ledger, "new", call(1, "Problem"), writer=writer)
    assert await ledger.head("new") is None


async def test_an_error_that_will_not_pass_fails_at_once_with_the_providers_message(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(error(404, "The model `nope` does not exist"))
    with pytest.raises(GenerationError) as caught:
        await think_external(ledger, "s", call(1, "Problem"), writer=writer, model="nope")
    assert str(caught.value) == f"{GENERATION_FAILED}: HTTP 404: The model `nope` does not exist"
    assert len(llm.bodies) == 1
    assert await ledger.head("s") is None


async def test_a_refusal_is_not_retried(ledger: Ledger, llm: FakeLLM, writer: LLMWriter) -> None:
    body = completion(None).body
    body["choices"][0]["message"]["refusal"] = "I can't help with that."
    llm.queue(Reply(body=body))
    with pytest.raises(GenerationError, match=re.escape("the model refused: I can't help")):
        await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    assert len(llm.bodies) == 1


async def test_an_answer_that_is_not_json_is_recorded_as_plain_text_without_confidence(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(completion("Just prose, no JSON."))
    outcome = await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    generation = outcome.entry.generation
    assert generation is not None
    assert outcome.entry.thought == "Just prose, no JSON."
    assert (generation.structured, generation.confidence, generation.reasoning_hint) == (
        False,
        None,
        None,
    )


async def test_plain_mode_asks_for_no_json_and_records_no_confidence(
    ledger: Ledger, llm: FakeLLM
) -> None:
    llm.queue(completion('{"thought": "looks structured", "confidence": 0.9}'))
    settings = LLMSettings(local_base_url=llm.base_url, structured="off")
    async with LLMWriter(settings) as writer:
        outcome = await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    assert "response_format" not in llm.bodies[0]
    assert outcome.entry.generation is not None
    assert outcome.entry.generation.confidence is None
    assert outcome.entry.thought == '{"thought": "looks structured", "confidence": 0.9}'


async def test_an_endpoint_refusing_structured_output_is_asked_for_less_and_remembered(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(
        error(400, "response_format json_schema is not supported", param="response_format"),
        error(400, "Unknown parameter: response_format.type json_object"),
        completion("Plain thought."),
        completion("Second plain thought."),
    )
    outcome = await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    again = await think_external(ledger, "s", call(2, "More"), writer=writer)
    formats = [body.get("response_format", {}).get("type") for body in llm.bodies]
    assert formats == ["json_schema", "json_object", None, None]
    assert "JSON" not in llm.bodies[2]["messages"][0]["content"]
    assert outcome.entry.generation is not None
    assert again.entry.generation is not None
    assert (outcome.entry.generation.attempts, again.entry.generation.attempts) == (3, 1)
    assert outcome.entry.generation.structured is False


async def test_a_model_that_refuses_a_temperature_is_asked_without_one_and_none_is_recorded(
    ledger: Ledger, llm: FakeLLM, writer: LLMWriter
) -> None:
    llm.queue(
        error(400, "Unsupported value: 'temperature' does not support 0.7", param="temperature"),
        structured("Thought."),
    )
    outcome = await think_external(ledger, "s", call(1, "Problem"), writer=writer)
    assert "temperature" not in llm.bodies[1]
    assert outcome.entry.generation is not None
    assert outcome.entry.generation.temperature is None
