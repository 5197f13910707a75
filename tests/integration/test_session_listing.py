"""Sessions listed newest first, in pages, for everyone or one owner, on every backend."""

import contextlib
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import create_async_engine

from tests.support.backends import Backend, pg_url
from tests.support.mcp import connect, resource_text
from thoughtledger import Ledger
from thoughtledger.api import CapturedReasoning, CapturedSpan
from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError
from thoughtledger.ledger.store.postgres.stats_dialect import POSTGRES_STATS
from thoughtledger.ledger.store.sql_parts import recent_heads_query
from thoughtledger.ledger.store.sqlite import SqliteEventStore
from thoughtledger.ledger.store.sqlite.stats_dialect import SQLITE_STATS

pytestmark = pytest.mark.anyio

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class Ticking:
    """A clock that moves one second per reading, so start times are all distinct."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def first(text: str = "t") -> dict[str, object]:
    return {"thought": text, "thought_number": 1, "total_thoughts": 2, "next_thought_needed": True}


async def test_pages_list_every_session_newest_first_without_gaps(backend: Backend) -> None:
    clock = Ticking()
    ledger = Ledger(await backend.open(clock=clock), clock=clock)
    try:
        made = [(await ledger.think(f"s{n:02d}", first())).session_id for n in range(25)]
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page = await ledger.recent_sessions(limit=7, cursor=cursor)
            seen += [state.session_id for state in page.sessions]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
            # A session started while paging arrives at the top, never inside later pages.
            if len(seen) == 7:
                await ledger.think("late", first())
        assert seen == list(reversed(made))
    finally:
        await ledger.aclose()


async def test_an_owner_lists_only_the_sessions_it_started(backend: Backend) -> None:
    clock = Ticking()
    ledger = Ledger(await backend.open(clock=clock), clock=clock)
    try:
        for n in range(4):
            await ledger.think(f"alice-{n}", first(), owner="alice")
            await ledger.think(f"bob-{n}", first(), owner="bob")
        await ledger.think("nobody", first())
        alice = await ledger.recent_sessions(owner="alice", limit=3)
        rest = await ledger.recent_sessions(owner="alice", cursor=alice.next_cursor)
        everyone = await ledger.recent_sessions()
        only = await ledger.recent_sessions(owner="carol", limit=1)
    finally:
        await ledger.aclose()
    assert [s.session_id for s in alice.sessions + rest.sessions] == [
        "alice-3",
        "alice-2",
        "alice-1",
        "alice-0",
    ]
    assert rest.next_cursor is None
    assert {s.owner for s in alice.sessions} == {"alice"}
    assert len(everyone.sessions) == 9
    assert only.sessions == []
    assert only.next_cursor is None


async def test_a_principal_cannot_write_to_a_session_it_does_not_own(backend: Backend) -> None:
    # Each way of changing a session applies the access door's rule to the session as the
    # append finds it: a thought, a batch, captured reasoning, a fork.
    ledger = Ledger(await backend.open())
    injected = {**first("INJECTED"), "thought_number": 2}
    try:
        await ledger.think("mine", first("alice's"), owner="alice")
        with pytest.raises(SessionNotFoundError) as refused:
            await ledger.think("mine", injected, owner="bob")
        with pytest.raises(SessionNotFoundError) as batch:
            await ledger.batches.think("mine", [injected], owner="bob")
        with pytest.raises(SessionNotFoundError) as captured:
            await ledger.capture.record({"mine": [_span("INJECTED")]}, owner="bob")
        with pytest.raises(SessionNotFoundError) as forked:
            await ledger.fork("mine", owner="bob")
        state = await ledger.state("mine")
        listed = await ledger.recent_sessions()
    finally:
        await ledger.aclose()
    for error in (refused, batch, captured, forked):
        assert str(error.value) == "no session 'mine' in this ledger"
    assert [t.thought for t in state.thoughts] == ["alice's"]
    assert state.owner == "alice"
    assert [s.session_id for s in listed.sessions] == ["mine"]  # no fork was started


def _span(text: str) -> CapturedSpan:
    return CapturedSpan(
        trace_id=f"{1:032x}",
        span_id=f"{2:016x}",
        dialect="gen_ai",
        parts=(CapturedReasoning(text),),
        conversation="mine",
        started_ns=1,
    )


@pytest.mark.parametrize(
    ("cursor", "limit"), [("not a cursor", 5), ("2026-01-01T00:00:00~x", 5), (None, 0)]
)
async def test_a_bad_cursor_or_limit_is_refused_by_name(
    backend: Backend, cursor: str | None, limit: int
) -> None:
    ledger = Ledger(await backend.open())
    try:
        with pytest.raises(InvalidInputError) as refused:
            await ledger.recent_sessions(cursor=cursor, limit=limit)
    finally:
        await ledger.aclose()
    assert "cursor" in str(refused.value) or "limit" in str(refused.value)


async def test_the_sessions_resource_pages_newest_first(tmp_path: Path) -> None:
    clock = Ticking()
    ledger = Ledger(await SqliteEventStore.open(tmp_path / "l.db", clock=clock), clock=clock)
    try:
        made = [(await ledger.think(None, first())).session_id for _ in range(130)]
        async with connect(ledger, "legacy") as client:
            newest = await resource_text(client, "thoughtledger://sessions")
            older = await resource_text(client, newest["next"])
    finally:
        await ledger.aclose()
    listed = [s["sessionId"] for s in newest["sessions"] + older["sessions"]]
    assert listed == list(reversed(made))
    assert len(newest["sessions"]) == 100
    assert "next" not in older


async def test_metadata_with_a_nul_starts_a_session_on_every_backend(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        outcome = await ledger.think(None, first(), metadata={"client": "evil\x00client"})
        state = await ledger.state(outcome.session_id)
        listed = await ledger.recent_sessions(owner=None)
    finally:
        await ledger.aclose()
    assert state.metadata["client"] == "evil\ufffdclient"
    assert [s.session_id for s in listed.sessions] == [outcome.session_id]


async def test_one_owners_page_is_read_through_the_owners_index(backend: Backend) -> None:
    # The listing a principal sees (the browser view's, over any number of sessions) is an
    # index lookup in the database, never a scan of every head in Python.
    if backend.name == "memory":
        pytest.skip("the query plan is a database's")
    ledger = Ledger(await backend.open())
    try:
        for n in range(3):
            await ledger.think(f"alice-{n}", first(), owner="alice")
            await ledger.think(f"bob-{n}", first(), owner="bob")
        listed = await ledger.recent_sessions(owner="alice", limit=2)
    finally:
        await ledger.aclose()
    assert [s.owner for s in listed.sessions] == ["alice", "alice"]
    dialect = SQLITE_STATS if backend.name == "sqlite" else POSTGRES_STATS
    query = recent_heads_query(dialect, owner="alice", before=None, limit=3)
    plan = await _plan(backend, query)
    assert "tl_events_owner" in plan, plan


async def _plan(backend: Backend, query: "sa.Select[Any]") -> str:
    if backend.name == "sqlite":
        sql = query.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True})
        with contextlib.closing(sqlite3.connect(backend.sqlite_path)) as db:
            return str(db.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall())
    url = pg_url()
    assert url is not None
    engine = create_async_engine(
        url, connect_args={"server_settings": {"search_path": backend.schema}}
    )
    sql = query.compile(dialect=engine.dialect, compile_kwargs={"literal_binds": True})
    try:
        async with engine.connect() as connection:
            # A table of a few rows is cheaper to scan: ask whether the index serves the query.
            await connection.execute(sa.text("SET enable_seqscan = off"))
            rows = (await connection.execute(sa.text(f"EXPLAIN {sql}"))).all()
    finally:
        await engine.dispose()
    return "\n".join(str(row[0]) for row in rows)
