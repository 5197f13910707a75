"""A session's thought count is one figure on every backend: a page of its history says what its
state says, whatever else the session holds (annotations, actions, redactions), now, as of any
version, and in a fork that inherits them. The CLI's ``show``, MCP's reading tools and the
browser view's pages read the page's count; its state is the fold's."""

import pytest

from tests.support.backends import Backend
from tests.support.raw_store import raw_store
from thoughtledger import Ledger
from thoughtledger.ledger.events import ActionTaken

pytestmark = pytest.mark.anyio


def call(number: int, last: int = 4) -> dict[str, object]:
    return {
        "thought": f"step {number}",
        "thought_number": number,
        "total_thoughts": last,
        "next_thought_needed": number < last,
    }


async def think(ledger: Ledger, session_id: str | None, number: int) -> str:
    return (await ledger.think(session_id, call(number))).session_id


async def asides_between_thoughts(ledger: Ledger) -> str:
    """Four thoughts with annotations, an action and a redaction among and after them."""
    session_id = await think(ledger, None, 1)
    await think(ledger, session_id, 2)
    await ledger.annotate(session_id, 1, label="good")
    await ledger.annotate(session_id, 2, label="wrong-premise", note="check it")
    head = await ledger.head(session_id)
    assert head is not None
    action = ActionTaken(
        name="grep", arguments="{}", after_thought=2, trace_id="a" * 32, span_id="b" * 16, part=0
    )
    await raw_store(ledger).append(session_id, [action], expected_version=head.version)
    await think(ledger, session_id, 3)
    await ledger.redaction.redact(session_id, thought_number=3, reason="a secret", by="ops")
    await think(ledger, session_id, 4)
    await ledger.annotate(session_id, 4, label="done")  # the last event: not a thought
    return session_id


async def test_a_page_counts_the_thoughts_its_state_counts_whatever_else_the_session_holds(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await asides_between_thoughts(ledger)
        state = await ledger.state(session_id)
        page = await ledger.history(session_id, limit=1)
        assert (page.thought_count, page.status) == (state.thought_count, state.status)
        assert state.thought_count == len(state.thoughts)  # the fold holds them all
        for version in range(1, state.version + 1):
            then = await ledger.state(session_id, as_of_version=version)
            paged = await ledger.history(session_id, as_of_version=version)
            assert (paged.thought_count, paged.status) == (then.thought_count, then.status), version
            assert paged.thought_count == len(then.thoughts)

        # A fork made past the annotations and the action inherits the thoughts only.
        at = state.version - 2
        fork = await ledger.fork(session_id, at_version=at)
        await think(ledger, fork.id, 4)
        await ledger.annotate(fork.id, 4, label="seen")
        forked = await ledger.state(fork.id)
        fork_page = await ledger.history(fork.id)
        assert (fork_page.thought_count, fork_page.status) == (forked.thought_count, forked.status)
        inherited = await ledger.state(session_id, as_of_version=at)
        assert forked.thought_count == inherited.thought_count + 1
    finally:
        await ledger.aclose()
