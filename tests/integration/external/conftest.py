"""Fixtures of the external-thought tests: a scripted OpenAI-compatible server, a writer that
records its backoff instead of waiting, and a ledger in memory."""

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.external import Pauses
from tests.support.llm_server import FakeLLM, fake_llm
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.llm.config import LLMSettings
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.memory import MemoryEventStore


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


@pytest.fixture
def pauses() -> Pauses:
    return Pauses()


@pytest.fixture
async def writer(llm: FakeLLM, pauses: Pauses) -> AsyncIterator[LLMWriter]:
    settings = LLMSettings(local_base_url=llm.base_url, timeout=5, backoff=0.25)
    async with LLMWriter(settings, sleep=pauses) as opened:
        yield opened


@pytest.fixture
def ledger() -> Ledger:
    return Ledger(MemoryEventStore())
