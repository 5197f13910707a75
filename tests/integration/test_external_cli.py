"""``show`` and ``stats`` tell who wrote each thought and what it cost (model-written sessions)."""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import cli, sqlite_url
from tests.support.llm_server import FakeLLM, fake_llm, structured
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.llm.config import LLMSettings
from thoughtledger.adapters.llm.external import think_external
from thoughtledger.api.bootstrap import open_ledger


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


def record(url: str, llm: FakeLLM) -> None:
    llm.queue(
        structured("Shared counters.", prompt_tokens=40, completion_tokens=12),
        structured(
            "Use Redis.", prompt_tokens=60, completion_tokens=8, usage_extra={"cost": 0.002}
        ),
    )

    async def run() -> None:
        settings = LLMSettings(local_base_url=llm.base_url)
        async with open_ledger(url) as ledger, LLMWriter(settings) as writer:
            for number, text in ((1, "Rate limiting?"), (2, "Redis")):
                arguments = {
                    "thought": text,
                    "thought_number": number,
                    "total_thoughts": 2,
                    "next_thought_needed": number < 2,
                }
                await think_external(ledger, "s", arguments, writer=writer, model="gpt-4o")

    asyncio.run(run())


def test_show_names_the_model_of_each_thought_and_what_it_cost(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, llm: FakeLLM
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    record(url, llm)
    ran = cli(capsys, "show", "s", "--db", url)
    assert ran.code == 0, ran.err
    assert "[gpt-4o] Shared counters." in ran.out
    assert "40+12 tokens ·" in ran.out
    assert "$0.002" in ran.out
    assert "written by gpt-4o (local): 2 thoughts · 100+20 tokens" in ran.out
    shown = cli(capsys, "show", "s", "--db", url, "--json").json()
    assert shown["thoughts"][0]["generation"]["promptTokens"] == 40


def test_stats_reports_tokens_and_latency_per_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, llm: FakeLLM
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    record(url, llm)
    (usage,) = cli(capsys, "stats", "--db", url, "--json").json()["byModel"]
    assert (usage["model"], usage["thoughts"], usage["promptTokens"]) == ("gpt-4o", 2, 100)
    table = cli(capsys, "stats", "--db", url)
    assert "by model" in table.out
    assert "100/20" in table.out
