"""Captured reasoning where people read it: the session page's payload, the SQL views."""

import json

import httpx
import pytest

from tests.support.backends import Backend
from tests.support.genai_senders import THINKING
from tests.support.views import as_dicts, view_rows
from tests.support.web import app_on_loopback
from thoughtledger import Ledger
from thoughtledger.api import CapturedAction, CapturedReasoning, CapturedSpan
from thoughtledger.ledger.events import MAX_ACTION_ARGUMENTS_CHARS, ActionTaken
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio

SQL_BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]


async def test_the_page_draws_a_captured_thought_marked_and_its_action_in_line(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    span = CapturedSpan(
        trace_id="ab" * 16,
        span_id="cd" * 8,
        dialect="gen_ai",
        conversation="page",
        model="model-x",
        parts=(
            CapturedReasoning(THINKING),
            CapturedAction("get_weather", "call_1", '{"city": "Oslo"}'),
            CapturedReasoning("", "opaque", opaque="ciphertext"),
        ),
    )
    await ledger.as_principal(None).capture([span])
    # What the session page is sent, through its own route.
    async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
        answer = await http.get("api/sessions/page")
    assert answer.status_code == 200
    started, thought, action, opaque = answer.json()["events"]
    assert started["md"]["conversation"] == "page"
    assert (thought["k"], thought["cap"], thought["x"], thought["n"]) == (
        "thought.recorded",
        "full",
        THINKING,
        1,
    )
    assert thought["f"] == {"captured": "full", "model": "model-x", "span": "cd" * 8}
    assert (action["k"], action["act"], action["n"]) == ("action.taken", "get_weather", 1)
    assert action["args"] == '{"city": "Oslo"}'
    assert (opaque["cap"], opaque["x"]) == ("opaque", "[opaque reasoning]")
    assert "ciphertext" not in answer.text


@pytest.mark.parametrize("backend", SQL_BACKENDS, indirect=True)
async def test_the_views_hold_captured_thoughts_with_their_model_and_each_action_after_one(
    backend: Backend,
) -> None:
    long = json.dumps({"text": "x" * MAX_ACTION_ARGUMENTS_CHARS})
    span = CapturedSpan(
        trace_id="ab" * 16,
        span_id="cd" * 8,
        dialect="gen_ai",
        conversation="acting",
        agent="planner",
        client="tests",
        provider="anthropic",
        model="claude-x",
        parts=(
            CapturedAction("look_first", None, ""),
            CapturedReasoning("Read the file before changing it."),
            CapturedAction("read_file", "call_1", '{"path": "a \u0000 b.py"}'),
            CapturedAction("write_file", "call_2", long),
        ),
    )
    async with Ledger(await backend.open()) as ledger:
        await ledger.as_principal(None).capture([span])
        recorded = [r for r in await ledger.events("acting") if isinstance(r.event, ActionTaken)]
        folded = [row async for _, rows in ledger.transfer.thought_rows() for row in rows]

    rows = await view_rows(backend, "tl_actions", "position")
    [thought] = await view_rows(backend, "tl_thoughts", "position")
    assert [thought] == as_dicts(folded)  # the exports' fold reads the same row
    assert (thought["kind"], thought["model"], thought["provider"]) == (
        "thought.captured",
        "claude-x",
        "anthropic",
    )
    assert thought["prompt_tokens"] is None

    assert [(row["session_id"], row["version"]) for row in rows] == [
        ("acting", r.version) for r in recorded
    ]
    assert [(row["agent"], row["client"]) for row in rows] == [("planner", "tests")] * 3
    assert [row["name"] for row in rows] == ["look_first", "read_file", "write_file"]
    assert [row["after_thought"] for row in rows] == [None, 1, 1]
    assert [row["call_id"] for row in rows] == [None, "call_1", "call_2"]
    # A NUL read as U+FFFD, as tl_thoughts reads one.
    assert rows[1]["arguments"] == '{"path": "a \ufffd b.py"}'
    assert rows[2]["arguments"] == long[:MAX_ACTION_ARGUMENTS_CHARS]
    assert [row["arguments_cut"] for row in rows] == [False, False, True]
    assert {(row["trace_id"], row["span_id"]) for row in rows} == {("ab" * 16, "cd" * 8)}
