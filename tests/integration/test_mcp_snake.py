"""The snake_case tools of the MCP API reference: ``sequential_thinking`` and its twin."""

import pytest
from mcp import Client

from tests.support.mcp import Json, Mode, call, connect, event_count, refused
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.mcp import TOOL_NAMES, create_server
from thoughtledger.adapters.mcp.tools.thinking import NO_MODEL_CLIENT
from thoughtledger.api.service import Ledger

pytestmark = pytest.mark.anyio


SNAKE = ("sequential_thinking", "sequential_thinking_external")


def snake(number: int, total: int = 3, *, more: bool = True, **extra: object) -> Json:
    return {
        "thought": f"step {number}",
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": more,
        **extra,
    }


async def test_the_default_session_answers_a_status_and_no_session_id(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode, tools=SNAKE) as client:
        answer = await call(client, "sequential_thinking", snake(1))
    assert answer == {
        "thought_number": 1,
        "total_thoughts": 3,
        "next_thought_needed": True,
        "branches": [],
        "thought_history_length": 1,
        "status": "recorded",
    }


async def test_each_kind_of_thought_has_its_status(ledger: Ledger, mode: Mode) -> None:
    async with connect(ledger, mode, tools=SNAKE) as client:
        statuses = [
            (await call(client, "sequential_thinking", arguments))["status"]
            for arguments in (
                snake(1),
                snake(2, is_revision=True, revises_thought=1),
                snake(3, branch_from_thought=1, branch_id="alt"),
                snake(4, total=4, more=False),
            )
        ]
    assert statuses == ["recorded", "revision", "branch", "complete"]


async def test_a_named_session_is_echoed_and_isolated_from_the_default(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode, tools=SNAKE) as client:
        await call(client, "sequential_thinking", snake(1))
        named = await call(client, "sequential_thinking", snake(1, session_id="arch-review-001"))
        named = await call(client, "sequential_thinking", snake(2, session_id="arch-review-001"))
        default = await call(client, "sequential_thinking", snake(2))
    assert named["session_id"] == "arch-review-001"
    assert named["thought_history_length"] == 2
    assert "session_id" not in default
    assert default["thought_history_length"] == 2
    assert len((await ledger.state("arch-review-001")).thoughts) == 2


async def test_the_default_session_is_the_connections_own(ledger: Ledger, mode: Mode) -> None:
    server = create_server(ledger, tools=TOOL_NAMES)
    async with Client(server, mode=mode) as one, Client(server, mode=mode) as two:
        official = {
            "thought": "t",
            "thoughtNumber": 1,
            "totalThoughts": 3,
            "nextThoughtNeeded": True,
        }
        await call(one, "sequentialthinking", official)
        mine = await call(one, "sequential_thinking", snake(2))
        theirs = await call(two, "sequential_thinking", snake(1))
    assert mine["thought_history_length"] == 2  # the official tool's thought and this one
    assert theirs["thought_history_length"] == 1


async def test_the_snake_tools_refuse_bad_arguments_in_002s_words(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode, tools=SNAKE) as client:
        said = await refused(client, "sequential_thinking", snake(0, next_thought_needed="yes"))
        missing = await refused(client, "sequential_thinking_external", {"thought": "x"})
    assert said == (
        "Invalid sequential thinking params: thought_number: must be at least 1 (got 0); "
        'next_thought_needed: must be true or false (or the string "true" or "false") (got "yes")'
    )
    assert missing.startswith("Invalid sequential thinking params: thought_number: required")
    assert await event_count(ledger) == 0


async def test_the_external_tool_without_a_provider_key_says_so_in_002s_words_and_appends_nothing(
    ledger: Ledger, mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in (
        "OPENAI_API_KEY",
        "OPENROUTER_API_KEY",
        "THOUGHTLEDGER_LLM_BASE_URL",
        "THOUGHTLEDGER_LLM_PROVIDER",
        "LUX_MODEL_NORMAL",
    ):
        monkeypatch.delenv(variable, raising=False)
    # The model client `thoughtledger serve` gives the server: configured from the environment.
    async with connect(ledger, mode, tools=SNAKE, open_writer=LLMWriter) as client:
        by_default = await refused(client, "sequential_thinking_external", snake(1))
        asked = await refused(client, "sequential_thinking_external", snake(1, use_llm=True))
        routed = await refused(
            client, "sequential_thinking_external", snake(1, model="anthropic/claude-sonnet-4")
        )
    assert by_default == asked
    assert by_default.startswith("OpenAI API key not configured")
    assert routed.startswith("OpenRouter API key not configured")
    assert await event_count(ledger) == 0


async def test_a_server_started_without_a_model_client_says_so_and_still_records_by_hand(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode, tools=SNAKE) as client:
        said = await refused(client, "sequential_thinking_external", snake(1))
        assert await event_count(ledger) == 0
        by_hand = await call(client, "sequential_thinking_external", snake(1, use_llm=False))
    assert said == NO_MODEL_CLIENT
    assert by_hand["thought_number"] == 1


async def test_the_external_tool_records_the_callers_thought_without_an_llm(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode, tools=SNAKE) as client:
        first = await call(
            client,
            "sequential_thinking_external",
            snake(1, use_llm=False, model="gpt-4o", temperature=0.7, session_id="rate-limit"),
        )
        last = await call(
            client,
            "sequential_thinking_external",
            snake(2, total=2, more=False, use_llm="false", session_id="rate-limit"),
        )
    assert first == {
        "thought_number": 1,
        "total_thoughts": 3,
        "next_thought_needed": True,
        "thought_content": "step 1",
        "branches": [],
        "thought_history_length": 1,
        "status": "thinking",
        "session_id": "rate-limit",
    }
    assert (last["status"], last["thought_history_length"]) == ("complete", 2)


async def test_without_a_connection_identity_default_is_one_shared_session(
    ledger: Ledger,
) -> None:
    # In-process clients always have an identity; the shared "default" is what 2026-07-28 HTTP
    # clients get (see test_mcp_http). Here: a named session is shared across connections.
    server = create_server(ledger, tools=SNAKE)
    async with Client(server, mode="auto") as one, Client(server, mode="legacy") as two:
        await call(one, "sequential_thinking", snake(1, session_id="shared"))
        answer = await call(two, "sequential_thinking", snake(2, session_id="shared"))
    assert answer["thought_history_length"] == 2
