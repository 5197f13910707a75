"""A session's agent and client, as MCP calls name them, read alike by every view, on every backend.

The agent is recorded once, when an MCP call starts a session (``session_agent``: the name in the
call's ``_meta``, else the server's ``--agent``, else none; with authentication the principal,
see ``test_http_principals.py``); the listing, the statistics and their filter, the flat rows
(the ``tl_thoughts`` view's), the SQL views, the browser view's row, the MCP resources and the
spans all read that one fact, and the client software is never taken for an agent.
"""

from typing import Any

import pytest
from mcp import Client

from tests.support.backends import Backend
from tests.support.mcp import Mode, agent_meta, resource_text, text_of, thought
from tests.support.views import view_rows
from thoughtledger.adapters.mcp import create_server
from thoughtledger.adapters.otel.spans import Conventions, session_spans
from thoughtledger.adapters.ui.payload import session_row
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.columns import THOUGHT_COLUMNS

pytestmark = pytest.mark.anyio


async def _start(ledger: Ledger, mode: Mode, *, agent: str | None, meta: Any) -> str:
    """Start a session with one thought over MCP; return its id."""
    async with Client(create_server(ledger, agent=agent), mode=mode) as client:
        result = await client.call_tool(
            "sequentialthinking",
            thought(1, total=1, more=False),
            meta=None if meta is None else agent_meta(meta),
        )
        assert result.is_error is False, text_of(result)
        session_id = result.structured_content and result.structured_content["sessionId"]
        assert isinstance(session_id, str)
        return session_id


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_view_reads_the_agent_the_mcp_call_named(backend: Backend, mode: Mode) -> None:
    store = await backend.open()
    async with Ledger(store) as ledger:
        planner = await _start(ledger, mode, agent=None, meta="planner")
        # The call's own name wins over the server's; the server's is the default.
        claimed = await _start(ledger, mode, agent="critic", meta="planner")
        critic = await _start(ledger, mode, agent="critic", meta=None)
        anonymous = await _start(ledger, mode, agent=None, meta=None)
        expected = {planner: "planner", claimed: "planner", critic: "critic", anonymous: None}

        states = {sid: await ledger.state(sid) for sid in expected}
        assert {sid: s.metadata.get("agent") for sid, s in states.items()} == expected
        client = states[anonymous].metadata.get("client")
        assert client, "the client software is recorded as the client"
        assert client not in expected.values()

        figures = await ledger.stats.summarize(agent="planner")
        assert figures.overall.sessions == 2
        assert sorted((agent or "", count.sessions) for agent, _, count in figures.by_agent) == [
            ("planner", 2)
        ]
        everyone = await ledger.stats.summarize()
        assert sorted((agent or "-", group.sessions) for agent, _, group in everyone.by_agent) == [
            ("-", 1),
            ("critic", 1),
            ("planner", 2),
        ]

        rows = [row async for _, page in ledger.transfer.thought_rows() for row in page]
        at = THOUGHT_COLUMNS.index
        assert {row[at("session_id")]: row[at("agent")] for row in rows} == expected
        assert {sid: session_row(state)["agent"] for sid, state in states.items()} == expected

        async with Client(create_server(ledger), mode=mode) as reader:
            listed = (await resource_text(reader, "thoughtledger://sessions"))["sessions"]
        assert {item["sessionId"]: item["agent"] for item in listed} == expected
        assert {item["sessionId"]: item["client"] for item in listed}[anonymous] == client

        for sid, agent in expected.items():
            (root,) = [
                span
                for span in session_spans(await ledger.events(sid), Conventions())
                if span.parent_span_id is None
            ]
            assert root.name == (f"invoke_agent {agent}" if agent else "invoke_agent")
            assert root.attributes.get("gen_ai.agent.name") == agent

    if backend.name != "memory":
        thoughts = await view_rows(backend, "tl_thoughts", "position")
        assert {row["session_id"]: row["agent"] for row in thoughts} == expected
        sessions = await view_rows(backend, "tl_session_stats", "session_id")
        assert {row["session_id"]: row["agent"] for row in sessions} == expected


@pytest.mark.parametrize("name", ["", "x" * 101, "red\x1b[31m", 42])
async def test_an_invalid_agent_name_is_refused_and_nothing_is_recorded(
    backend: Backend, name: object
) -> None:
    store = await backend.open()
    async with Ledger(store) as ledger:
        async with Client(create_server(ledger)) as client:
            result = await client.call_tool("sequentialthinking", thought(1), meta=agent_meta(name))
            assert result.is_error is True
            assert "an agent's name" in text_of(result)
            # The same connection goes on: a valid call still records.
            assert "sessionId" in text_of(await client.call_tool("sequentialthinking", thought(1)))
        assert len(await ledger.all_heads()) == 1
