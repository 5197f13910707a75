"""The analytics views: one row per thought and per session, in plain SQL, on every SQL backend.

The views are read as any SQL tool reads them (plain SQL on the database); the rows must equal
those the log folds into (what the CSV and Parquet exports write, on every backend), and the
session rows must agree with the statistics, whose definitions they share.
"""

from datetime import timedelta

import pytest

from tests.support.backends import Backend
from tests.support.factories import GENERATION, started, thought
from tests.support.raw_store import raw_store
from tests.support.views import as_dicts, view_rows
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.events import (
    BranchOpened,
    LedgerEvent,
    SessionCleared,
    SessionExpired,
    ThoughtGenerated,
    ThoughtRevised,
)
from thoughtledger.ledger.store.base import utc_now

pytestmark = pytest.mark.anyio

SQL_BACKENDS = [
    pytest.param("sqlite"),
    pytest.param("postgres", marks=pytest.mark.postgres),
]

GENERATED = ThoughtGenerated(
    thought="a model's thought",
    thought_number=3,
    total_thoughts=4,
    next_thought_needed=False,
    kind="thought.revised",
    is_revision=True,
    revises_thought=1,
    guidance="think again",
    generation=GENERATION.model_copy(
        update={"prompt_tokens": 120, "completion_tokens": 30, "cost": 0.0025}
    ),
)

LOGS: dict[str, list[LedgerEvent]] = {
    "planned": [
        started(agent="planner", client="claude-code"),
        thought(1, total=3),
        ThoughtRevised(
            thought="no, wait",
            thought_number=2,
            total_thoughts=5,
            next_thought_needed=True,
            is_revision=True,
            revises_thought=1,
        ),
        BranchOpened(
            thought="what if",
            thought_number=3,
            total_thoughts=5,
            next_thought_needed=True,
            branch_from_thought=2,
            branch_id="alt",
        ),
        GENERATED,
    ],
    "cleared": [started(agent="coder"), thought(1), SessionCleared(reason="done")],
    "expired": [thought(1), SessionExpired(idle_seconds=4000, ttl_seconds=1800)],
    "empty": [started(client="cursor")],
}
HUGE: list[LedgerEvent] = [
    started(agent="huge"),
    thought(2**70, total=2**70),
    BranchOpened(
        thought="a NUL \x00 inside",
        thought_number=2,
        total_thoughts=2,
        next_thought_needed=False,
        branch_from_thought=1,
        branch_id="b\x00",
    ),
]
"""A count beyond any column, and NUL characters, which neither backend's SQL text can hold (the
statistics' own SQL cannot read the count on PostgreSQL)."""


async def _ledger_with_logs(backend: Backend, logs: dict[str, list[LedgerEvent]]) -> Ledger:
    store = await backend.open()
    for session_id, log in logs.items():
        await store.append(session_id, log, expected_version=0)
    return Ledger(store)


@pytest.mark.parametrize("backend", SQL_BACKENDS, indirect=True)
async def test_the_thoughts_view_holds_the_rows_the_log_folds_into(backend: Backend) -> None:
    async with await _ledger_with_logs(backend, {**LOGS, "huge": HUGE}) as ledger:
        folded = [row async for _, rows in ledger.transfer.thought_rows(page=3) for row in rows]
    viewed = await view_rows(backend, "tl_thoughts", "position")
    assert viewed == as_dicts(folded)
    assert len(viewed) == 2 + sum(1 for log in LOGS.values() for e in log if hasattr(e, "thought"))
    by_session = {(row["session_id"], row["version"]): row for row in viewed}
    model = by_session["planned", 5]
    assert (model["kind"], model["model"], model["prompt_tokens"], model["cost"]) == (
        "thought.revised",
        "m",
        120,
        0.0025,
    )
    assert (by_session["planned", 4]["branch_id"], by_session["planned", 4]["agent"]) == (
        "alt",
        "planner",
    )
    # A count no column holds reads as unknown, and the view still answers.
    assert by_session["huge", 2]["thought_number"] is None
    # A NUL reads as U+FFFD (the view would fail on PostgreSQL, and cut text short on SQLite).
    nul = by_session["huge", 3]
    assert (nul["thought"], nul["branch_id"]) == ("a NUL \ufffd inside", "b\ufffd")


@pytest.mark.parametrize("backend", SQL_BACKENDS, indirect=True)
async def test_the_sessions_view_agrees_with_the_statistics(backend: Backend) -> None:
    async with await _ledger_with_logs(backend, LOGS) as ledger:
        facts = {f.session_id: f for f in (await raw_store(ledger).stats.stats_rows()).facts}
    rows = {r["session_id"]: r for r in await view_rows(backend, "tl_session_stats", "session_id")}
    assert rows.keys() == facts.keys() == LOGS.keys()
    for session_id, row in rows.items():
        fact = facts[session_id]
        assert (row["agent"], row["client"], row["events"], row["thoughts"]) == (
            fact.agent,
            fact.client,
            fact.events,
            fact.thoughts,
        )
        assert (row["revisions"], row["branches"], row["completed"]) == (
            fact.revisions,
            fact.branches,
            bool(fact.completed),  # the statistics leave it unknown without thoughts
        )
    assert {s: r["status"] for s, r in rows.items()} == {
        "planned": "completed",
        "cleared": "cleared",
        "expired": "expired",
        "empty": "open",
    }
    planned = rows["planned"]
    assert (planned["first_estimate"], planned["last_estimate"], planned["estimate_drift"]) == (
        3,
        4,
        1,
    )
    assert (planned["generated"], planned["prompt_tokens"], planned["completion_tokens"]) == (
        1,
        120,
        30,
    )
    assert planned["cost"] == pytest.approx(0.0025)
    assert rows["empty"]["thoughts"] == 0
    assert rows["empty"]["first_estimate"] is None


@pytest.mark.parametrize("backend", SQL_BACKENDS, indirect=True)
async def test_the_sessions_view_measures_durations_from_recorded_times(backend: Backend) -> None:
    base = utc_now()
    moments = iter([base + timedelta(seconds=s) for s in (0, 1.5, 4, 10)])
    store = await backend.open(clock=lambda: next(moments))
    async with Ledger(store) as ledger:
        for event in (started(), thought(1), thought(2)):
            head = await ledger.head("timed")
            await store.append("timed", [event], expected_version=head.version if head else 0)
    (row,) = await view_rows(backend, "tl_session_stats", "session_id")
    assert (row["duration_ms"], row["thinking_ms"]) == (4000, 2500)
