"""Captured reasoning through the facade's door, on every backend: once each, owned, provable.

The receiver's own tests drive real senders over HTTP; these drive ``Scope.capture`` directly,
on memory, SQLite and PostgreSQL, for what the ledger does with what it captured: a part is
recorded once however often it is sent (and however many send it at once), a principal's
conversation is its own, and redaction, verify, checkpoints and proofs treat captured thoughts
as they treat the tool's.
"""

import asyncio
import json

import pytest

from tests.support.backends import settled
from thoughtledger import Ledger
from thoughtledger.api import (
    AccessDeniedError,
    CapturedAction,
    CapturedReasoning,
    CapturedSpan,
    Principal,
)
from thoughtledger.api.proofs import verify_bundle
from thoughtledger.ledger.checkpoint import Signer
from thoughtledger.ledger.events import ActionTaken, ThoughtCaptured
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio

SECRET = "The key in the prompt is sk-live-1234; do not repeat it."  # noqa: S105  # a test text


def span(n: int, conversation: str | None = "conv-1", *parts: object) -> CapturedSpan:
    """A span of one call: its reasoning, a tool call, and more reasoning, unless given."""
    chosen = parts or (
        CapturedReasoning(f"reasoning {n}, before the tool"),
        CapturedAction("search", f"call_{n}", json.dumps({"q": n})),
        CapturedReasoning(f"reasoning {n}, after the tool", "summary"),
    )
    return CapturedSpan(
        trace_id=f"{n:032x}",
        span_id=f"{n + 1:016x}",
        dialect="gen_ai",
        parts=tuple(chosen),  # type: ignore[arg-type]  # the parts given are parts
        conversation=conversation,
        started_ns=n,
        agent="planner",
        client="tests",
        model="model-x",
    )


async def test_a_part_is_recorded_once_however_often_and_concurrently_it_is_sent(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    scope = ledger.as_principal(None)
    spans = [span(n) for n in range(1, 4)]
    # The same batch, four times at once, as retries racing one another would send it.
    reports = await asyncio.gather(*(scope.capture(spans) for _ in range(4)))
    assert sum(r.thoughts for r in reports) == 6
    assert sum(r.actions for r in reports) == 3
    again = await scope.capture(list(reversed(spans)))
    assert (again.thoughts, again.actions, again.duplicates) == (0, 0, 9)
    events = [r.event for r in await ledger.events("conv-1")]
    thoughts = [e for e in events if isinstance(e, ThoughtCaptured)]
    assert [t.thought_number for t in thoughts] == list(range(1, 7))
    assert thoughts[0].thought == "reasoning 1, before the tool"
    assert [t.capture.form for t in thoughts[:2]] == ["full", "summary"]
    actions = [e for e in events if isinstance(e, ActionTaken)]
    assert [a.after_thought for a in actions] == [1, 3, 5]
    assert (await ledger.verify("conv-1")).ok


async def test_a_batch_of_many_conversations_sent_again_appends_only_its_new_spans(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    scope = ledger.as_principal(None)
    first = [span(n, f"conv-{n % 3}") for n in range(1, 10)]
    await scope.capture(first)
    # An exporter's retry of the whole batch, with two spans it had not sent yet: one to a
    # conversation it wrote before, one to a new one.
    later = [*first, span(10, "conv-1"), span(11, "conv-new")]
    report = await scope.capture(later)
    assert (report.thoughts, report.actions, report.duplicates) == (4, 2, 27)
    thoughts = [
        e.thought
        for r in await ledger.events("conv-1")
        if isinstance(e := r.event, ThoughtCaptured)
    ]
    assert thoughts[-2:] == ["reasoning 10, before the tool", "reasoning 10, after the tool"]
    assert len(thoughts) == 8  # spans 1, 4, 7 and 10
    assert (await ledger.verify("conv-new")).ok


async def test_a_principals_conversation_is_its_own_and_a_reader_records_nothing(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    alice = ledger.as_principal(Principal("alice"))
    bob = ledger.as_principal(Principal("bob"))
    await alice.capture([span(1, "shared")])
    await bob.capture([span(2, "shared")])
    alices = [r.event for r in await alice.events("shared")]
    bobs = [r.event for r in await bob.events("shared")]
    assert {e.capture.trace_id for e in alices if isinstance(e, ThoughtCaptured)} == {f"{1:032x}"}
    assert {e.capture.trace_id for e in bobs if isinstance(e, ThoughtCaptured)} == {f"{2:032x}"}
    with pytest.raises(AccessDeniedError, match="reader role"):
        await ledger.as_principal(Principal("rita", "reader")).capture([span(3, "shared")])
    assert await ledger.head("shared") is None  # neither wrote under the name itself


async def test_a_sender_without_a_conversation_key_gets_a_session_per_trace(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    report = await ledger.as_principal(None).capture([span(7, None), span(8, None)])
    assert sorted(report.sessions) == [f"trace-{7:032x}", f"trace-{8:032x}"]


async def test_captured_thoughts_are_redacted_verified_and_proved_as_the_tools_are(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    scope = ledger.as_principal(None)
    await scope.capture([span(1, "audit", CapturedReasoning(SECRET)), span(2, "audit")])
    signer = Signer.generate("ledger.example/log")
    await settled(store, 5)
    note = await ledger.proofs.checkpoint(signer)
    bundle = json.loads(json.dumps(await ledger.proofs.prove("audit", 2, note)))
    _, event = verify_bundle(bundle, signer.verifier())
    assert (event["sessionId"], event["eventType"]) == ("audit", "thought.captured")

    await ledger.redaction.redact("audit", thought_number=1, reason="a secret", by="ops")
    state = await scope.state("audit")
    assert state.thoughts[0].redacted
    assert SECRET not in json.dumps([r.payload for r in await store.read_stream("audit")])
    assert (await ledger.verify("audit")).ok
    # The proof taken before the redaction still verifies: the digest the text was sealed
    # under is what the hash covers.
    verify_bundle(bundle, signer.verifier())


async def test_captured_thoughts_are_found_by_search_listed_and_counted(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    scope = ledger.as_principal(None)
    await scope.capture([span(1, "found"), span(2, "found")])
    hits = (await scope.search("reasoning tool")).results
    assert {hit.session_id for hit in hits} == {"found"}
    assert len(hits) == 4
    [listed] = (await scope.sessions()).sessions
    assert listed.session_id == "found"
    assert (listed.metadata["agent"], listed.metadata["client"]) == ("planner", "tests")
    figures = await scope.figures()
    assert (figures.overall.sessions, figures.overall.thoughts) == (1, 4)
    [(agent, client, by_agent)] = figures.by_agent
    assert (agent, client, by_agent.thoughts) == ("planner", "tests", 4)
