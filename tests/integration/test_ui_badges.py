"""The sessions list's badges over real HTTP, on every backend: each session read once per
request, a bounded number of sessions, a session too long to read answered as not checked, and
counts that add up across the windows a session is read in."""

from typing import Any

import httpx
import pytest

from tests.support.backends import Backend
from tests.support.web import app_on_loopback
from thoughtledger import Ledger
from thoughtledger.api import Generated
from thoughtledger.ledger.events import Generation

pytestmark = pytest.mark.anyio


def thought(number: int, text: str = "t", **marks: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thought_number": number,
        "total_thoughts": max(number, 3),
        "next_thought_needed": True,
        **marks,
    }


def by_model(number: int, cost: float | None) -> Generated:
    generation = Generation(
        model="small",
        provider="local",
        prompt_sha256="0" * 64,
        context_version=number,
        structured=True,
        latency_ms=100,
        attempts=1,
        cost=cost,
    )
    return Generated(guidance="keep going", generation=generation)


async def test_a_repeated_id_gets_one_badge_and_more_than_fifty_sessions_are_refused(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open(), ttl=None)
    try:
        first = (await ledger.think(None, thought(1))).session_id
        second = (await ledger.think(None, thought(1))).session_id
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            asked = ",".join([first, second, first, first, "not-there", second])
            answer = await http.get("api/badges", params={"ids": asked})
            assert [b["sessionId"] for b in answer.json()["badges"]] == [first, second]
            # 200 ids, 50 of them distinct: within the bound once repeats are dropped.
            fifty = [f"s-{n}" for n in range(50)]
            assert (await http.get("api/badges", params={"ids": ",".join(fifty * 4)})).json() == {
                "badges": []
            }
            refused = await http.get("api/badges", params={"ids": ",".join([*fifty, "s-50"])})
            assert refused.status_code == 400
            assert refused.json() == {"error": "at most 50 sessions at once, not 51"}
            malformed = await http.get("api/badges", params={"ids": f"{first},bad id"})
            assert malformed.status_code == 400
    finally:
        await ledger.aclose()


async def test_a_session_longer_than_a_badge_reads_is_answered_unchecked_with_the_command(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thoughtledger.adapters.ui.badges

    monkeypatch.setattr(thoughtledger.adapters.ui.badges, "BADGE_EVENTS_MAX", 4)
    ledger = Ledger(await backend.open(), ttl=None)
    try:
        for number in range(1, 5):
            await ledger.think("long", thought(number))
        for number in range(1, 4):
            await ledger.think("short", thought(number))
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            badges = (await http.get("api/badges", params={"ids": "long,short"})).json()["badges"]
    finally:
        await ledger.aclose()
    assert badges == [
        {
            "sessionId": "long",
            "ok": None,
            "tooLong": True,
            "events": 5,
            "checked": 0,
            "reason": "5 events, more than the 4 a badge reads: "
            "check it with thoughtledger verify long",
            "badVersion": None,
            "revisions": None,
            "cost": None,
            "generated": None,
        },
        {
            "sessionId": "short",
            "ok": True,
            "checked": 4,
            "reason": None,
            "badVersion": None,
            "revisions": 0,
            "cost": None,
            "generated": 0,
        },
    ]


async def test_revisions_and_cost_add_up_across_windows_and_a_badge_follows_its_session(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thoughtledger.adapters.ui.badges

    monkeypatch.setattr(thoughtledger.adapters.ui.badges, "BADGE_WINDOW", 2)
    ledger = Ledger(await backend.open(), ttl=None)
    try:
        sid = "costly"
        await ledger.think(sid, thought(1), generated=by_model(1, 0.25))
        await ledger.think(sid, thought(2, is_revision=True, revises_thought=1))
        await ledger.think(sid, thought(3), generated=by_model(3, None))
        await ledger.think(sid, thought(4), generated=by_model(4, 0.125))
        await ledger.think(sid, thought(5, is_revision=True, revises_thought=4))
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            badge = (await http.get("api/badges", params={"ids": sid})).json()["badges"][0]
            assert (badge["ok"], badge["checked"], badge["revisions"]) == (True, 6, 2)
            assert (badge["cost"], badge["generated"]) == (0.375, 3)
            await ledger.think(sid, thought(6, is_revision=True, revises_thought=2))
            later = (await http.get("api/badges", params={"ids": sid})).json()["badges"][0]
            assert (later["checked"], later["revisions"]) == (7, 3)
    finally:
        await ledger.aclose()
