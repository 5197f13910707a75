"""Hostile input over MCP: thousands of generated calls per tool against one live server.

Every call gets an answer (a result or a tool error with a message), a refused call appends
nothing, and the server is still serving at the end. One server and one client serve every
example of a tool, as a long-running server would.
"""

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from tests.support.hostile import nasty_text, values
from tests.support.raw_store import raw_store
from thoughtledger.adapters.mcp import create_server
from thoughtledger.adapters.mcp.server import TOOL_NAMES
from thoughtledger.api.bootstrap import open_ledger
from thoughtledger.ledger.thought import CAMEL_NAMES, THOUGHT_FIELDS

pytestmark = pytest.mark.slow  # thousands of calls per tool: CI runs them, a local run does not

# 1,000 calls per tool in a full run; the dedicated run sets 10,000 (see docs/operations.md).
EXAMPLES = int(os.environ.get("THOUGHTLEDGER_MCP_FUZZ_EXAMPLES", "1000"))

CAMEL = [*CAMEL_NAMES.values(), "sessionId", "clearSession"]
SNAKE = [*THOUGHT_FIELDS, "session_id", "model", "temperature", "use_llm"]
READ = ["sessionId", "show", "asOfVersion", "asOfTime"]


def calls(names: list[str], base: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        args = dict(base)
        for name in draw(st.lists(st.sampled_from(names), max_size=5)):
            args[name] = draw(values)
        drop: bool = draw(st.booleans())
        if args and drop:
            del args[draw(st.sampled_from(sorted(args)))]
        if draw(st.integers(0, 9)) == 0:
            args[draw(st.text(min_size=1, max_size=8))] = draw(values)
        return args

    return build()


_ONE_THOUGHT = calls(
    CAMEL, {"thought": "t", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True}
)

TOOLS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "sequentialthinking": calls(
        CAMEL, {"thought": "t", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True}
    ),
    "sequential_thinking": calls(
        SNAKE,
        {"thought": "t", "thought_number": 1, "total_thoughts": 2, "next_thought_needed": True},
    ),
    "sequential_thinking_external": calls(
        SNAKE,
        {
            "thought": "t",
            "thought_number": 1,
            "total_thoughts": 2,
            "next_thought_needed": True,
            "use_llm": False,
        },
    ),
    "thinking_history": calls(READ, {"sessionId": "s"}),
    "sequential_thinking_batch": st.fixed_dictionaries(
        {"thoughts": st.lists(_ONE_THOUGHT, max_size=4) | values},
        optional={"sessionId": values},
    ),
}


def _fuzz(tool: str) -> None:
    async def scenario(path: Path) -> None:
        async with open_ledger(f"sqlite:///{path}") as ledger:
            server = create_server(ledger, tools=TOOL_NAMES)
            async with Client(server) as client:
                examples, seen = 0, 0

                @settings(
                    max_examples=EXAMPLES,
                    deadline=None,
                    suppress_health_check=list(HealthCheck),
                    database=None,
                )
                @given(TOOLS[tool], nasty_text)
                def one(args: dict[str, Any], _label: str) -> None:
                    nonlocal examples, seen
                    examples += 1
                    result = asyncio.run_coroutine_threadsafe(
                        client.call_tool(tool, args), loop
                    ).result()
                    new = asyncio.run_coroutine_threadsafe(
                        raw_store(ledger).read_all(after_position=seen, limit=1000), loop
                    ).result()
                    if new:
                        seen = new[-1].position
                    if result.is_error:
                        content = result.content[0] if result.content else None
                        text = getattr(content, "text", "")
                        assert text.strip(), "a refusal must say why"
                        assert "Traceback" not in text
                        assert new == [], "a refused call must append nothing"

                loop = asyncio.get_running_loop()
                await asyncio.to_thread(one)
                still = await client.call_tool(
                    "sequentialthinking",
                    {
                        "thought": "ok",
                        "thoughtNumber": 1,
                        "totalThoughts": 1,
                        "nextThoughtNeeded": False,
                        "sessionId": "after-fuzz",
                    },
                )
                assert not still.is_error
                assert examples > 0

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(scenario(Path(tmp) / "fuzz.db"))


def test_the_official_tool_survives_hostile_calls() -> None:
    _fuzz("sequentialthinking")


def test_the_snake_case_tool_survives_hostile_calls() -> None:
    _fuzz("sequential_thinking")


def test_the_external_tool_survives_hostile_calls() -> None:
    _fuzz("sequential_thinking_external")


def test_the_read_tool_survives_hostile_calls() -> None:
    _fuzz("thinking_history")


def test_the_batch_tool_survives_hostile_calls() -> None:
    _fuzz("sequential_thinking_batch")
