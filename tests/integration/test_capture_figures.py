"""Captured reasoning counted per model: thoughts, and each call's reasoning tokens once.

Sessions are built by the capture path (``Scope.capture``, what the receiver calls) on every
backend; the figures are read through the ledger's statistics, the browser view's ``/api/stats``,
``stats --json`` and its table.
"""

import asyncio
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.cli import cli, sqlite_url
from tests.support.factories import GENERATION
from tests.support.web import app_on_loopback
from thoughtledger import Ledger, open_ledger
from thoughtledger.api import CapturedAction, CapturedReasoning, CapturedSpan
from thoughtledger.ledger.decide import Generated
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.projections.usage import UNNAMED


def call(n: int, model: str | None, tokens: int | None, parts: int) -> CapturedSpan:
    """One model call of conversation ``chat``: ``parts`` reasoning parts around a tool call."""
    reasoning = [CapturedReasoning(f"call {n} reasons, part {i}") for i in range(parts)]
    return CapturedSpan(
        trace_id=f"{n:032x}",
        span_id=f"{n:016x}",
        dialect="gen_ai",
        parts=(*reasoning[:1], CapturedAction("search", f"c{n}", "{}"), *reasoning[1:]),
        conversation=f"chat-{n % 2}",
        started_ns=n,
        agent="planner",
        provider=None if model is None else "anthropic",
        model=model,
        reasoning_tokens=tokens,
    )


CALLS = [
    call(1, "claude-x", 300, 3),
    call(2, "claude-x", 40, 1),
    call(3, "claude-y", None, 2),
    call(4, "claude-x", 7, 2),
    call(5, None, 11, 1),
]


def expected() -> dict[str, tuple[int, int | None]]:
    """Per model: its reasoning parts, and the reported reasoning tokens of its calls."""
    parts: Counter[str] = Counter()
    tokens: defaultdict[str, int | None] = defaultdict(lambda: None)
    for span in CALLS:
        model = span.model or UNNAMED
        parts[model] += sum(isinstance(part, CapturedReasoning) for part in span.parts)
        if span.reasoning_tokens is not None:
            tokens[model] = (tokens[model] or 0) + span.reasoning_tokens
    return {model: (count, tokens[model]) for model, count in parts.items()}


async def capture(ledger: Ledger) -> None:
    # Each call sent twice, as an exporter's retry does: counted once all the same.
    await ledger.as_principal(None).capture(CALLS)
    await ledger.as_principal(None).capture(CALLS[::-1])


@pytest.mark.anyio
async def test_captured_thoughts_count_per_model_with_each_calls_reasoning_tokens_once(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    before = datetime.now(UTC)
    await capture(ledger)
    # And a thought a model wrote through the ledger: its own figures beside the captured ones.
    generation = GENERATION.model_copy(update={"prompt_tokens": 9, "completion_tokens": 4})
    arguments = {"thought": "t", "thought_number": 1, "total_thoughts": 1}
    written_call = {**arguments, "next_thought_needed": False}
    await ledger.think("written", written_call, generated=Generated("p", generation))

    usage = {u.model: u for u in await ledger.stats.model_usage()}

    assert await ledger.stats.model_usage(until=before) == []
    assert {u.model: u for u in await ledger.stats.model_usage(since=before)} == usage

    assert {
        model: (u.thoughts, u.reasoning_tokens) for model, u in usage.items() if u.captured
    } == expected()
    assert all(u.captured == u.thoughts for u in usage.values() if u.model != GENERATION.model)
    assert usage[UNNAMED].provider == UNNAMED
    assert usage["claude-x"].latency_ms_p50 is None  # captured reasoning has no latency
    written = usage[GENERATION.model]
    assert (written.thoughts, written.captured, written.reasoning_tokens) == (1, 0, None)
    assert (written.prompt_tokens, written.latency_ms_p50) == (9, GENERATION.latency_ms)
    # The browser view's analytics are sent the same figures, through their route.
    async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
        answer = await http.get("api/stats")
    assert answer.status_code == 200
    sent = {
        m["model"]: (m["thoughts"], m["captured"], m["reasoningTokens"])
        for m in answer.json()["byModel"]
    }
    assert sent == {u.model: (u.thoughts, u.captured, u.reasoning_tokens) for u in usage.values()}


def test_stats_shows_captured_reasoning_by_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")

    async def build() -> None:
        async with open_ledger(url) as ledger:
            await capture(ledger)

    asyncio.run(build())

    as_json = cli(capsys, "stats", "--db", url, "--json")
    table = cli(capsys, "stats", "--db", url)

    assert as_json.code == 0, as_json.err
    by_model: list[dict[str, Any]] = as_json.json()["byModel"]
    assert {m["model"]: (m["captured"], m["reasoningTokens"]) for m in by_model} == expected()
    assert all(m["latencyMsP50"] is None for m in by_model)
    assert table.code == 0, table.err
    rows = [line.split() for line in table.out.splitlines() if "anthropic" in line]
    # model, provider, thoughts, captured, reasoning tokens (the rest: no latency, no cost)
    shown = {row[0]: (int(row[3]), None if row[4] == "-" else int(row[4])) for row in rows}
    assert shown == {model: figures for model, figures in expected().items() if model != UNNAMED}
