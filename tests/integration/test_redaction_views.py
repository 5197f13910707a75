"""A redacted thought as every way of reading it back shows it: ``[redacted]``, and says so."""

import json

import pytest

from tests.support.mcp import Mode, call, connect, think, thought
from tests.support.raw_store import raw_store
from tests.support.redaction import record_redaction_only
from thoughtledger.adapters.otel.spans import Conventions, session_spans
from thoughtledger.adapters.ui.payload import session_payload
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.content import REDACTED
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.projections.answers import JsonDict, full_history, session_view

pytestmark = pytest.mark.anyio

PERSONAL = "my home address is 1 Example Road"


async def redacted_session(ledger: Ledger) -> str:
    session = await ledger.new_session(metadata={"agent": "a"})
    for number, text in enumerate(["plan", PERSONAL, "act"], start=1):
        await session.process_sequential_thinking(
            thought=text, thought_number=number, total_thoughts=3, next_thought_needed=True
        )
    await ledger.redaction.redact(session.id, thought_number=2, reason="erasure request", by="dpo")
    return session.id


async def test_views_exports_and_traces_show_the_thought_redacted() -> None:
    ledger = Ledger(MemoryEventStore())
    try:
        session_id = await redacted_session(ledger)
        records = await ledger.events(session_id)
        state = await ledger.state(session_id)
    finally:
        await ledger.aclose()
    history = session_view(state)["thoughtHistory"]
    assert history[1] == {"thoughtNumber": 2, "thought": REDACTED, "redacted": True}
    assert "redacted" not in history[0]
    page = session_payload(session_id, records)["events"]
    assert (page[2]["x"], page[2]["rd"]) == (REDACTED, True)
    assert "rd" not in page[1]
    assert (page[4]["k"], page[4]["rdv"], page[4]["n"]) == ("thought.redacted", 3, 2)
    assert page[4]["why"] == "by dpo: erasure request"
    events = full_history(records)
    assert (events[2]["event"]["thought"], events[2]["event"]["redacted"]) == (REDACTED, True)
    spans = session_spans(records, Conventions(capture_content=True))
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert [s.attributes.get("thoughtledger.redacted", False) for s in tools] == [
        False,
        True,
        False,
    ]
    assert all(PERSONAL not in str(s.attributes) for s in spans)
    [root] = [s for s in spans if s.parent_span_id is None]
    assert [name for name, _, _ in root.events] == ["thoughtledger.thought.redacted"]


async def test_thinking_history_over_mcp_shows_the_thought_redacted(
    ledger: Ledger, mode: Mode
) -> None:
    async with connect(ledger, mode) as client:
        await think(client, thought(1))
        answer = await think(client, thought(2))
        session_id = answer.get("sessionId")
        if session_id is None:
            [state] = await ledger.list_sessions()
            session_id = state.session_id
        await ledger.redaction.redact(
            session_id, thought_number=1, reason="erasure request", by="dpo"
        )
        read = await call(client, "thinking_history", {"sessionId": session_id})
    assert read["thoughtHistoryLength"] == 2
    first, second = read["history"]
    assert (first["thought"], first["redacted"]) == (REDACTED, True)
    assert "redacted" not in second


async def test_thinking_history_pages_show_a_redaction_cut_short_redacted(
    ledger: Ledger, mode: Mode
) -> None:
    """The text is still stored (the strip never ran): every page and bound shows it redacted."""
    async with connect(ledger, mode) as client:
        await think(client, thought(1) | {"thought": PERSONAL})
        await think(client, thought(2))
        [state] = await ledger.list_sessions()
        session_id = state.session_id
        await record_redaction_only(ledger, session_id, 2)
        assert any(PERSONAL in r.payload for r in await raw_store(ledger).read_stream(session_id))
        items: list[JsonDict] = []
        arguments: JsonDict = {"sessionId": session_id, "limit": 1}
        while True:
            read = await call(client, "thinking_history", arguments)
            items += read["history"]
            if not read["more"]:
                break
            arguments = {"sessionId": session_id, "limit": 1, "after": read["nextCursor"]}
        as_of = await call(client, "thinking_history", {"sessionId": session_id, "asOfVersion": 2})
        view = await call(client, "thinking_history", {"sessionId": session_id, "show": "view"})
    assert read["thoughtHistoryLength"] == 2
    first, second = items
    assert (first["thought"], first["redacted"]) == (REDACTED, True)
    assert "redacted" not in second
    assert PERSONAL not in json.dumps(items)
    assert as_of["history"] == [first]
    assert [t["thought"] for t in view["view"]["thoughtHistory"]] == [REDACTED, "thought 2"]
