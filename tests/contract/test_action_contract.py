"""A session's actions on every backend: read back in order, cut at a version, paged with the
thoughts they followed, kept from other principals, and folded into the rows of ``tl_actions``."""

import pytest

from tests.support import acting
from tests.support.backends import Backend
from tests.support.views import view_rows
from thoughtledger import Ledger
from thoughtledger.api import CapturedAction, CapturedReasoning, CapturedSpan, Principal
from thoughtledger.api.reading import ACTIONS_GAP
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError
from thoughtledger.ledger.store.columns import ACTION_COLUMNS

pytestmark = pytest.mark.anyio


async def test_a_sessions_actions_are_read_back_in_order_now_and_as_of_a_version(
    backend: Backend,
) -> None:
    async with Ledger(await backend.open()) as ledger:
        await acting.record(ledger.as_principal(None))
        actions = await ledger.actions(acting.SESSION)
        earlier = await ledger.actions(acting.SESSION, as_of_version=4)
        with pytest.raises(InvalidInputError, match="past its end"):
            await ledger.actions(acting.SESSION, as_of_version=8)
        with pytest.raises(SessionNotFoundError):
            await ledger.actions("no-such-session")
    assert [a.name for a in actions] == acting.NAMES
    assert [a.version for a in actions] == acting.VERSIONS
    assert [a.after_thought for a in actions] == acting.AFTER
    assert [a.arguments for a in actions] == ["{}", acting.MARKUP, acting.ESCAPE, '{"line": 3}']
    assert [a.call_id for a in actions] == [None, "call_1", "call_2", "call_3"]
    assert {a.span_id for a in actions} == {acting.SPAN.span_id}
    assert earlier == actions[:2]


async def test_actions_far_apart_are_each_read_and_nothing_between_them(backend: Backend) -> None:
    between = ACTIONS_GAP + 8
    span = CapturedSpan(
        trace_id="1f" * 16,
        span_id="2e" * 8,
        dialect="gen_ai",
        conversation="far-apart",
        parts=(
            CapturedAction("first", None, "{}"),
            *(CapturedReasoning(f"step {n}") for n in range(1, between + 1)),
            CapturedAction("second", None, "{}"),
            CapturedReasoning("last step"),
            CapturedAction("third", None, "{}"),
        ),
    )
    async with Ledger(await backend.open()) as ledger:
        await ledger.as_principal(None).capture([span])
        actions = await ledger.actions("far-apart")
    assert [(a.name, a.version, a.after_thought) for a in actions] == [
        ("first", 2, None),
        ("second", between + 3, between),
        ("third", between + 5, between + 1),
    ]


async def test_the_pages_of_a_history_carry_each_action_once(backend: Backend) -> None:
    async with Ledger(await backend.open()) as ledger:
        await acting.record(ledger.as_principal(None))
        pages = [await ledger.history(acting.SESSION, limit=1)]
        while pages[-1].next_cursor is not None:
            pages.append(await ledger.history(acting.SESSION, after=pages[-1].next_cursor))
    assert [item["thoughtNumber"] for page in pages for item in page.items] == [1, 2]
    assert [a.version for page in pages for a in page.actions] == acting.VERSIONS
    assert pages[0].actions[0].after_thought is None  # the call before any thought


async def test_another_principals_session_has_no_actions_to_read(backend: Backend) -> None:
    async with Ledger(await backend.open()) as ledger:
        alice = ledger.as_principal(Principal("alice"))
        await acting.record(alice)
        assert len(await alice.actions(acting.SESSION)) == 4
        alices = (await alice.head(acting.SESSION)).session_id  # her own, under her name
        auditor = ledger.as_principal(Principal("carol", "auditor"))
        assert len(await auditor.actions(alices)) == 4
        for name in (alices, acting.SESSION):
            with pytest.raises(SessionNotFoundError):
                await ledger.as_principal(Principal("bob", "reader")).actions(name)


async def test_the_action_rows_the_exports_fold_are_the_views(backend: Backend) -> None:
    async with Ledger(await backend.open()) as ledger:
        await acting.record(ledger.as_principal(None))
        recorded = await ledger.actions(acting.SESSION)
        folded = [
            dict(zip(ACTION_COLUMNS, row, strict=True))
            async for _, page in ledger.transfer.action_rows(page=2)
            for row in page
        ]
    # The exports' fold (every backend) and the view (SQL backends) hold the same rows.
    rows = await view_rows(backend, "tl_actions", "position") if backend.durable else folded
    assert rows == folded
    assert [{k: v for k, v in row.items() if k != "position"} for row in rows] == [
        {
            "session_id": acting.SESSION,
            "version": action.version,
            "recorded_at": format_time(action.recorded_at),
            "agent": "planner",
            "client": "tests",
            "after_thought": action.after_thought,
            "name": action.name,
            "call_id": action.call_id,
            "arguments": action.arguments,
            "arguments_cut": False,
            "trace_id": acting.SPAN.trace_id,
            "span_id": acting.SPAN.span_id,
        }
        for action in recorded
    ]
