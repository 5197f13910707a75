"""``serve --otlp``: each thought goes out as a span while the server runs (a real server on
stdio, a real OTLP/HTTP receiver on loopback)."""

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.mcp import text_of, thought
from tests.support.otlp import Received, attributes, otlp_receiver
from tests.support.processes import ROOT, child_env, serve_command, sqlite_in
from thoughtledger import open_ledger
from thoughtledger.adapters.otel.live import live_traces

pytestmark = pytest.mark.anyio


async def _until(received: Received, spans: int, seconds: float = 20) -> None:
    """Wait until the receiver holds ``spans`` spans (the receiver is a thread: poll it)."""
    for _ in range(int(seconds / 0.05)):
        if len(received.spans) >= spans:
            return
        await anyio.sleep(0.05)


async def test_thoughts_are_sent_as_they_are_recorded_and_the_root_when_the_session_ends(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    with otlp_receiver() as (endpoint, received):
        server = StdioServerParameters(
            command=sys.executable,
            args=serve_command(db, "--otlp", endpoint, "--agent", "planner")[1:],
            cwd=ROOT,
            env=child_env(),
        )
        async with Client(server) as client:
            for number in (1, 2):
                result = await client.call_tool("sequentialthinking", thought(number))
                assert result.is_error is False, text_of(result)
            await _until(received, 2)
            # Sent while the server still runs: nothing waits for the end of the session.
            assert [s.name for s in received.spans] == ["execute_tool sequentialthinking"] * 2
            last = await client.call_tool("sequentialthinking", thought(3, more=False))
            assert last.is_error is False, text_of(last)
            await _until(received, 4)
            names = sorted(s.name for s in received.spans)
            assert names[:3] == ["execute_tool sequentialthinking"] * 3
            assert names[3] == "invoke_agent planner"  # the server's --agent: its calls name none
            # A second session, left open: its root goes out when the server stops.
            opened = await client.call_tool("sequentialthinking", thought(1))
            assert opened.is_error is False, text_of(opened)
            assert "sessionId" in text_of(opened), text_of(opened)
    (root,) = [
        s
        for s in received.spans
        if not s.parent_span_id and s.trace_id == received.spans[0].trace_id
    ]
    tools = [s for s in received.spans if s.parent_span_id == root.span_id]
    assert sorted(attributes(s)["thoughtledger.thought_number"] for s in tools) == [1, 2, 3]
    assert all(attributes(s)["mcp.method.name"] == "tools/call" for s in tools)
    roots = [s for s in received.spans if not s.parent_span_id]
    assert len(roots) == 2
    assert len({s.trace_id for s in received.spans}) == 2


async def test_a_session_begun_before_the_stream_joins_its_trace(tmp_path: Path) -> None:
    url = sqlite_in(tmp_path)
    first = {"thought": "a", "thought_number": 1, "total_thoughts": 2, "next_thought_needed": True}
    async with open_ledger(url) as ledger:
        session_id = (await ledger.think(None, first)).session_id
    with otlp_receiver() as (endpoint, received):
        async with open_ledger(url) as ledger, live_traces(ledger, endpoint) as live:
            last = {**first, "thought": "b", "thought_number": 2, "next_thought_needed": False}
            await ledger.think(session_id, last)
        assert live.sent == 2
    (tool,) = [s for s in received.spans if s.parent_span_id]
    (root,) = [s for s in received.spans if not s.parent_span_id]
    assert (tool.parent_span_id, tool.trace_id) == (root.span_id, root.trace_id)
    assert attributes(tool)["thoughtledger.thought_number"] == 2
    assert attributes(root)["thoughtledger.session.events"] == 3  # the start and both thoughts
    assert root.start_time_unix_nano <= tool.start_time_unix_nano <= tool.end_time_unix_nano
    assert tool.end_time_unix_nano == root.end_time_unix_nano  # the last event: both end there
