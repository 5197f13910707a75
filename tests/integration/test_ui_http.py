"""The web app's JSON over real HTTP on loopback, on every backend: what pages are sent, and
that bad requests get one line and change nothing."""

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.support.backends import Backend
from tests.support.web import app_on_loopback
from thoughtledger import Ledger

pytestmark = pytest.mark.anyio

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class Ticking:
    """A clock that moves one second per reading, so start times are all distinct."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def thought(number: int, text: str = "t", **marks: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thought_number": number,
        "total_thoughts": max(number, 3),
        "next_thought_needed": True,
        **marks,
    }


async def _data(lines: AsyncIterator[str], count: int, *, within: float) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    async with asyncio.timeout(within):
        async for line in lines:
            if line.startswith("data: "):
                got.append(json.loads(line.removeprefix("data: ")))
                if len(got) == count:
                    break
    return got


async def _log_size(ledger: Ledger) -> int:
    return sum(head.version for head in await ledger.all_heads())


async def test_sessions_come_newest_first_in_pages_and_filter_by_agent_and_status(
    backend: Backend,
) -> None:
    clock = Ticking()
    ledger = Ledger(await backend.open(clock=clock), clock=clock, ttl=None)
    try:
        made = []
        for n in range(9):
            agent = "planner" if n % 3 == 0 else "coder"
            outcome = await ledger.think(None, thought(1), metadata={"agent": agent})
            if n == 3:
                await ledger.think(outcome.session_id, {**thought(2), "next_thought_needed": False})
            made.append(outcome.session_id)
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            seen: list[str] = []
            cursor = ""
            while True:
                asked: dict[str, str | int] = {"limit": 4, "cursor": cursor}
                page = (await http.get("api/sessions", params=asked)).json()
                seen += [row["sessionId"] for row in page["sessions"]]
                if page["next"] is None:
                    break
                cursor = page["next"]
            assert seen == list(reversed(made))
            planners = (await http.get("api/sessions", params={"agent": "planner"})).json()
            assert [row["sessionId"] for row in planners["sessions"]] == [
                made[6],
                made[3],
                made[0],
            ]
            done = (await http.get("api/sessions", params={"status": "complete"})).json()
            assert [row["sessionId"] for row in done["sessions"]] == [made[3]]
            assert done["sessions"][0]["thoughts"] == 2
            started = (await ledger.state(made[5])).started_at
            assert started is not None
            recent = (await http.get("api/sessions", params={"since": started.isoformat()})).json()
            assert [row["sessionId"] for row in recent["sessions"]] == made[:4:-1]
            before = (await http.get("api/sessions", params={"until": started.isoformat()})).json()
            assert [row["sessionId"] for row in before["sessions"]] == made[4::-1]
    finally:
        await ledger.aclose()


async def test_a_session_is_sent_as_its_chained_events_with_badges_and_verify(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open(), ttl=None)
    try:
        sid = (await ledger.think(None, thought(1, "first"), metadata={"agent": "a"})).session_id
        await ledger.think(sid, thought(2, "second"))
        await ledger.think(sid, thought(3, "again", is_revision=True, revises_thought=1))
        await ledger.think(sid, thought(4, "side", branch_from_thought=2, branch_id="alt"))
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            payload = (await http.get(f"api/sessions/{sid}")).json()
            stored = await ledger.events(sid)
            events = payload["events"]
            assert [e["v"] for e in events] == [1, 2, 3, 4, 5]
            assert [e["k"] for e in events] == [
                "session.started",
                "thought.recorded",
                "thought.recorded",
                "thought.revised",
                "branch.opened",
            ]
            assert [e.get("x") for e in events[1:]] == ["first", "second", "again", "side"]
            # An intact link is sent once (the page reads it from the event before).
            assert events[0]["ph"] == "0" * 64
            assert all("ph" not in later for later in events[1:])
            assert [record.prev_hash for record in stored][1:] == [e["h"] for e in events[:-1]]
            assert (events[3]["rv"], events[4]["b"], events[4]["bf"]) == (1, "alt", 2)
            assert [e["h"] for e in events] == [record.hash for record in stored]
            badge = (await http.get("api/badges", params={"ids": sid})).json()["badges"][0]
            assert (badge["ok"], badge["checked"], badge["revisions"]) == (True, 5, 1)
            report = (await http.get(f"api/sessions/{sid}/verify")).json()
            assert (report["ok"], report["checked"]) == (True, 5)
            stats = (await http.get("api/stats")).json()
            assert stats["overall"] == {
                **(await ledger.stats.summarize()).as_dict()["overall"],
            }
    finally:
        await ledger.aclose()


async def test_the_live_feed_sends_each_new_event_once_after_the_position_given(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open(), ttl=None)
    try:
        sid = (await ledger.think(None, thought(1, "first"))).session_id
        last = (await ledger.events(sid))[-1].position
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            url = f"api/sessions/{sid}/live"
            async with http.stream("GET", url, params={"after": last}) as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                lines = stream.aiter_lines()
                assert await anext(lines) == ": following"
                await ledger.think(sid, thought(2, "second"))
                await ledger.think(sid, thought(3, "third"))
                got = await _data(lines, 2, within=5)
                assert [(e["v"], e["x"]) for e in got] == [(3, "second"), (4, "third")]
                extra: list[dict[str, Any]] = []
                with contextlib.suppress(TimeoutError):  # several polls: nothing more comes
                    extra = await _data(lines, 1, within=1)
                assert extra == []
    finally:
        await ledger.aclose()


async def test_bad_requests_get_one_line_and_change_nothing(backend: Backend) -> None:
    ledger = Ledger(await backend.open(), ttl=None)
    try:
        sid = (await ledger.think(None, thought(1))).session_id
        before = await _log_size(ledger)
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            answers = {
                "unknown session": await http.get("api/sessions/nope-nope"),
                "malformed id": await http.get("api/sessions/%00bad"),
                "bad limit": await http.get("api/sessions", params={"limit": "ten"}),
                "limit out of range": await http.get("api/sessions", params={"limit": 0}),
                "bad cursor": await http.get("api/sessions", params={"cursor": "x~y"}),
                "bad time": await http.get("api/sessions", params={"since": "yesterday"}),
                "bad after": await http.get(f"api/sessions/{sid}/live", params={"after": "x"}),
                "no such file": await http.get("static/../../etc/passwd"),
                "foreign host": await http.get("api/sessions", headers={"Host": "evil.test"}),
                "writing": await http.post("api/sessions"),
            }
            codes = {name: answer.status_code for name, answer in answers.items()}
            assert codes == {
                "unknown session": 404,
                "malformed id": 400,
                "bad limit": 400,
                "limit out of range": 400,
                "bad cursor": 400,
                "bad time": 400,
                "bad after": 400,
                "no such file": 404,
                "foreign host": 421,
                "writing": 405,
            }
            for answer in answers.values():
                message = answer.json()["error"]
                assert message
                assert "\n" not in message
                assert "Traceback" not in message
            page = await http.get(f"sessions/{sid}")
            assert page.headers["content-security-policy"].startswith("default-src 'none'")
            assert "script-src 'self'" in page.headers["content-security-policy"]
        assert await _log_size(ledger) == before
    finally:
        await ledger.aclose()


async def test_counts_past_what_javascript_holds_travel_as_exact_digits(backend: Backend) -> None:
    ledger = Ledger(await backend.open(), ttl=None)
    try:
        huge = 2**70
        sid = (await ledger.think(None, {**thought(1), "total_thoughts": huge})).session_id
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            events = (await http.get(f"api/sessions/{sid}")).json()["events"]
            assert events[1]["tt"] == str(huge)
            assert events[1]["n"] == 1
    finally:
        await ledger.aclose()


async def test_a_session_longer_than_the_page_holds_is_refused_with_the_way_to_read_it(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thoughtledger.adapters.ui.routes

    monkeypatch.setattr(thoughtledger.adapters.ui.routes, "SESSION_PAGE_MAX", 3)
    ledger = Ledger(await backend.open(), ttl=None)
    try:
        sid = "long"
        for number in range(1, 5):
            await ledger.think(sid, thought(number))
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            answer = await http.get(f"api/sessions/{sid}")
            walk = await http.get(f"api/sessions/{sid}/verify")
    finally:
        await ledger.aclose()
    assert answer.status_code == 400
    assert answer.json()["error"] == (
        "session 'long' has 5 events: this page shows sessions of up to 3; "
        "read it page by page with thoughtledger show long --limit 100"
    )
    assert walk.status_code == 400
    assert walk.json()["error"] == (
        "session 'long' has 5 events: this app walks chains of up to 3; "
        "check it with thoughtledger verify long"
    )
