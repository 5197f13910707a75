"""``/api/sessions/ID/forks`` and ``.../compare`` of ``thoughtledger ui --auth``: a real process.

On every durable backend: alice's session, alice's fork of it, and bob's fork of it (a fork whose
source bob may not read, as an import from another ledger brings one). Each principal lists the
forks it may read and compares a fork with what it may read of the source.
"""

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.samples import thought
from tests.support.ui_app import UiApp, ui_app
from thoughtledger import open_ledger
from thoughtledger.api import open_store
from thoughtledger.ledger.events import SessionStarted
from thoughtledger.ledger.ids import new_session_id

Ids = dict[str, str]


def _record(url: str) -> Ids:
    async def scenario() -> Ids:
        async with open_ledger(url, ttl=None) as ledger:
            source = (await ledger.think(None, thought(1, 3), owner="alice")).session_id
            await ledger.think(source, thought(2, 3), owner="alice")  # version 3
            goes_on = {**thought(3, 3), "thought": "the source goes on <b>here</b>"}
            await ledger.think(source, goes_on, owner="alice")
            at = (await ledger.events(source, as_of_version=3))[-1].hash
            fork = await ledger.fork(
                source, at_version=3, metadata={"agent": "alice-bot"}, owner="alice"
            )
            mine = {**thought(3, 3), "thought": "alice's other way"}
            await ledger.think(fork.id, mine, owner="alice")
            further = {**thought(4, 4), "thought": "and further"}
            await ledger.think(fork.id, further, owner="alice")
        bobs = new_session_id()
        store = await open_store(url)
        try:
            started = SessionStarted(
                owner="bob", metadata={"agent": "bob"}, fork_of=source, fork_version=3, fork_hash=at
            )
            await store.append(bobs, [started], expected_version=0)
        finally:
            await store.aclose()
        async with open_ledger(url, ttl=None) as ledger:
            await ledger.think(bobs, {**thought(3, 3), "thought": "bob's way"}, owner="bob")
        return {"source": source, "alice": fork.id, "bob": bobs}

    return asyncio.run(scenario())


@pytest.fixture
def served(ledger_url: str, tmp_path: Path) -> Iterator[tuple[UiApp, Ids]]:
    ids = _record(ledger_url)
    with ui_app(ledger_url, tmp_path / "tokens.json") as app:
        yield app, ids


def _get(app: UiApp, token: str, path: str, **params: Any) -> httpx.Response:
    with app.client({"Authorization": f"Bearer {token}"}) as http:
        return http.get(path, params=params)


def test_each_principal_lists_only_the_forks_it_may_read(served: tuple[UiApp, Ids]) -> None:
    app, ids = served
    alice, bob = app.mint("alice", "reader"), app.mint("bob", "writer")
    auditor = app.mint("carol", "auditor")

    listed = _get(app, alice, f"api/sessions/{ids['source']}/forks")
    assert listed.status_code == 200, listed.text
    (fork,) = listed.json()["forks"]
    assert fork["sessionId"] == ids["alice"]
    assert (fork["version"], fork["agent"]) == (3, "alice-bot")
    assert fork["href"] == f"/sessions/{ids['alice']}"
    assert listed.json()["more"] is False
    everything = _get(app, auditor, f"api/sessions/{ids['source']}/forks").json()["forks"]
    assert [fork["sessionId"] for fork in everything] == [ids["alice"], ids["bob"]]
    # The source is alice's: to bob it is not there at all, forks and all.
    refused = _get(app, bob, f"api/sessions/{ids['source']}/forks")
    assert refused.status_code == 404
    assert ids["bob"] not in refused.text


def test_compare_sets_a_fork_beside_its_source_from_the_fork_point(
    served: tuple[UiApp, Ids],
) -> None:
    app, ids = served
    alice = app.mint("alice", "reader")

    answer = _get(app, alice, f"api/sessions/{ids['alice']}/compare")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert (found["sessionId"], found["version"], found["common"]) == (ids["alice"], 3, 2)
    source = found["source"]
    assert source["readable"] is True
    assert source["href"] == f"/sessions/{ids['source']}?v=3"
    assert [(t["number"], t["version"], t["text"]) for t in source["thoughts"]] == [
        (3, 4, "the source goes on <b>here</b>")  # as written: the page shows it as text
    ]
    assert source["total"] == 1
    assert [(t["number"], t["text"]) for t in found["fork"]["thoughts"]] == [
        (3, "alice's other way"),
        (4, "and further"),
    ]
    assert found["fork"]["total"] == 2
    first = _get(app, alice, f"api/sessions/{ids['alice']}/compare", limit=1).json()
    assert [t["text"] for t in first["fork"]["thoughts"]] == ["alice's other way"]
    assert first["fork"]["total"] == 2


def test_compare_says_when_the_source_may_not_be_read_and_shows_the_fork(
    served: tuple[UiApp, Ids],
) -> None:
    app, ids = served
    bob = app.mint("bob", "writer")

    answer = _get(app, bob, f"api/sessions/{ids['bob']}/compare")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["common"] == 2
    assert found["source"]["readable"] is False
    assert found["source"]["thoughts"] == []
    assert found["source"]["total"] is None
    assert "goes on" not in answer.text  # nothing of the source's own thoughts
    assert [t["text"] for t in found["fork"]["thoughts"]] == ["bob's way"]
    # alice's fork is alice's: to bob it is missing, as every session he may not read.
    assert _get(app, bob, f"api/sessions/{ids['alice']}/compare").status_code == 404


def test_compare_refuses_what_is_no_fork_and_bounds_what_it_sends(
    served: tuple[UiApp, Ids],
) -> None:
    app, ids = served
    auditor = app.mint("carol", "auditor")

    not_a_fork = _get(app, auditor, f"api/sessions/{ids['source']}/compare")
    assert not_a_fork.status_code == 400
    assert "is no fork" in not_a_fork.json()["error"]
    for bad in ("0", "201", "many"):
        refused = _get(app, auditor, f"api/sessions/{ids['alice']}/compare", limit=bad)
        assert refused.status_code == 400, refused.text
        assert "limit" in refused.json()["error"]
    assert _get(app, auditor, "api/sessions/not%20an%20id/compare").status_code == 400
    with httpx.Client(base_url=app.base) as anonymous:
        assert anonymous.get(f"api/sessions/{ids['alice']}/compare").status_code == 401
