"""Captured reasoning where people read it: the session page's payload, thoughts and actions."""

import pytest

from tests.support.genai_senders import THINKING
from thoughtledger import Ledger
from thoughtledger.adapters.ui.payload import event_json
from thoughtledger.api import CapturedAction, CapturedReasoning, CapturedSpan
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio


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
    started, thought, action, opaque = [event_json(r) for r in await ledger.events("page")]
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
    assert "ciphertext" not in str(opaque)
