"""``/api/search`` of ``thoughtledger ui --auth``, a real process over HTTP: each finds its own."""

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.cli import sqlite_url
from tests.support.ui_app import UiApp, record_owned, ui_app


@pytest.fixture
def ledger(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A ledger with two sessions of alice, one of bob and one of the ledger's own user."""
    url = sqlite_url(tmp_path / "l.db")
    owners = {"alice-1": "alice", "alice-2": "alice", "bob-1": "bob", "nobody's": None}
    return url, record_owned(url, owners)


@pytest.fixture
def app(tmp_path: Path, ledger: tuple[str, dict[str, str]]) -> Iterator[UiApp]:
    with ui_app(ledger[0], tmp_path / "tokens.json") as running:
        yield running


def _found(http: httpx.Client, query: str) -> set[str]:
    answer = http.get("api/search", params={"q": query})
    assert answer.status_code == 200, answer.text
    return {hit["sessionId"] for hit in answer.json()["results"]}


def test_a_principal_finds_only_the_thoughts_it_may_read(
    app: UiApp, ledger: tuple[str, dict[str, str]]
) -> None:
    ids = ledger[1]
    alice, auditor = app.mint("alice", "reader"), app.mint("carol", "auditor")
    with app.client({"Authorization": f"Bearer {alice}"}) as http:
        assert _found(http, "thinks") == {ids["alice-1"], ids["alice-2"]}
        answer = http.get("api/search", params={"q": "alice again"})
        hits = answer.json()["results"]
        assert {hit["href"] for hit in hits} == {
            f"/sessions/{ids['alice-1']}?v=3",
            f"/sessions/{ids['alice-2']}?v=3",
        }
        refused = http.get("api/search", params={"q": "-thinks"})
        assert refused.status_code == 400
        assert "no word to find" in refused.json()["error"]
    with app.client({"Authorization": f"Bearer {auditor}"}) as http:
        assert _found(http, "thinks") == set(ids.values())
    with httpx.Client(base_url=app.base) as anonymous:
        assert anonymous.get("api/search", params={"q": "thinks"}).status_code == 401
