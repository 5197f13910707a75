"""``thoughtledger ui``: live sockets, live streams and sign-ins, each principal its own share.

One principal opening sockets and event streams without end is refused with 429 past its share
(``--max-live``, sockets and streams together), while another follows its own session; one
principal signing in again and again ends only its own oldest sign-ins (``--max-sign-ins``),
never another's; one principal asking for the page of its own huge session does not hold up
another's requests while the page is built; one principal's flood of requests waits its own
pace while another's are answered. A real ``ui`` in a child process.
"""

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus

from tests.support.live_socket import live_socket, receive, send
from tests.support.processes import WAIT, sqlite_in
from tests.support.ui_app import UiApp, record_owned, ui_app
from thoughtledger import open_ledger
from thoughtledger.adapters.common.pacing import BURST, RATE
from thoughtledger.api import MAX_BATCH_THOUGHTS, Principal

pytestmark = pytest.mark.anyio


@contextlib.contextmanager
def _stream(app: UiApp, token: str, session_id: str) -> Iterator[httpx.Response]:
    headers = {"Authorization": f"Bearer {token}"}
    with (
        httpx.Client(base_url=app.base, timeout=WAIT, headers=headers) as http,
        http.stream("GET", f"api/sessions/{session_id}/live") as answer,
    ):
        yield answer


@pytest.fixture
def owned(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """An SQLite ledger with a session of mallory's and one of alice's."""
    db = sqlite_in(tmp_path)
    return db, record_owned(db, {"mallory-1": "mallory", "alice-1": "alice"})


async def test_sockets_and_streams_past_a_principals_share_get_429_and_others_go_on(
    tmp_path: Path, owned: tuple[str, dict[str, str]]
) -> None:
    db, ids = owned
    with ui_app(db, tmp_path / "tokens.json", "--max-live", "3") as app:
        mallory, alice = app.mint("mallory", "reader"), app.mint("alice", "reader")
        async with contextlib.AsyncExitStack() as held:
            with contextlib.ExitStack() as streams:
                for _ in range(2):
                    await held.enter_async_context(live_socket(app, token=mallory))
                first = streams.enter_context(_stream(app, mallory, ids["mallory-1"]))
                assert first.status_code == 200
                refused = streams.enter_context(_stream(app, mallory, ids["mallory-1"]))
                assert refused.status_code == 429
                refused.read()
                assert "principal 'mallory' already holds 3" in refused.json()["error"]
                with pytest.raises(InvalidStatus) as socket_refused:
                    await held.enter_async_context(live_socket(app, token=mallory))
                assert socket_refused.value.response.status_code == 429
                # Another principal: its stream and its socket, as if mallory were not there.
                own = streams.enter_context(_stream(app, alice, ids["alice-1"]))
                assert own.status_code == 200
                async with live_socket(app, token=alice) as socket:
                    await send(socket, {"op": "ping"})
                    assert await receive(socket) == {"type": "pong"}
            # mallory's stream ended: the room is its own again.
            with _stream(app, mallory, ids["mallory-1"]) as again:
                assert again.status_code == 200


def test_signing_in_again_and_again_ends_only_ones_own_oldest_sign_ins(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    record_owned(db, {"alice-1": "alice"})
    with ui_app(db, tmp_path / "tokens.json", "--max-sign-ins", "4") as app:
        mallory, alice = app.mint("mallory", "reader"), app.mint("alice", "reader")

        def signed_in(browsers: contextlib.ExitStack, token: str) -> httpx.Client:
            http = browsers.enter_context(httpx.Client(base_url=app.base, timeout=WAIT))
            answer = http.post("api/signin", json={"token": token}, headers={"Origin": app.origin})
            assert answer.status_code == 200, answer.text
            return http

        with contextlib.ExitStack() as browsers:
            alices = signed_in(browsers, alice)
            mallorys = [signed_in(browsers, mallory) for _ in range(30)]
            assert alices.get("api/me").json() == {"auth": True, "name": "alice", "role": "reader"}
            assert [b.get("api/me").status_code for b in mallorys] == [401] * 26 + [200] * 4


async def test_a_full_app_ends_the_heaviest_holders_oldest_stream_for_a_newcomer(
    tmp_path: Path, owned: tuple[str, dict[str, str]]
) -> None:
    db, ids = owned
    options = ("--max-live", "3", "--max-live-total", "4")
    with ui_app(db, tmp_path / "tokens.json", *options) as app:
        mallory, alice = app.mint("mallory", "reader"), app.mint("alice", "reader")
        with contextlib.ExitStack() as streams:
            held = [
                streams.enter_context(_stream(app, mallory, ids["mallory-1"])) for _ in range(3)
            ]
            own = streams.enter_context(_stream(app, alice, ids["alice-1"]))
            assert [s.status_code for s in [*held, own]] == [200] * 4
            # Full: alice (1) gets in by ending mallory's oldest (3), never the other way.
            async with live_socket(app, token=alice) as socket:
                await send(socket, {"op": "ping"})
                assert await receive(socket) == {"type": "pong"}
                seen = []
                for line in held[0].iter_lines():  # its events so far, then the end
                    seen.append(line)
                    if line == "event: pushed-out":
                        break
                assert seen[-1] == "event: pushed-out", seen
                with pytest.raises(InvalidStatus) as refused:
                    async with live_socket(app, token=mallory):
                        pass
                assert refused.value.response.status_code == 429


HUGE_PAGE_THOUGHTS = 6_000
"""Thoughts of the session whose page one principal asks for: long enough that building its
page takes many of another principal's small requests."""


@pytest.fixture
def huge(tmp_path: Path) -> tuple[str, str, str]:
    """An SQLite ledger with a huge session of mallory's and a small one of alice's: their ids."""
    db = sqlite_in(tmp_path)
    owner = "mallory"

    async def record() -> str:
        async with open_ledger(db, ttl=None) as ledger:
            writer = ledger.as_principal(Principal(owner, "writer"))
            session_id: str | None = None
            for start in range(1, HUGE_PAGE_THOUGHTS + 1, MAX_BATCH_THOUGHTS):
                end = min(start + MAX_BATCH_THOUGHTS, HUGE_PAGE_THOUGHTS + 1)
                steps = [
                    {
                        "thought": f"{owner} weighs option {number}",
                        "thought_number": number,
                        "total_thoughts": HUGE_PAGE_THOUGHTS,
                        "next_thought_needed": True,
                    }
                    for number in range(start, end)
                ]
                session_id = (await writer.think_batch(session_id, steps))[-1].session_id
            assert session_id is not None
            await ledger.mark_loops()  # its loop marks taken in, as a served ledger's are
            return session_id

    huge = asyncio.run(record())
    return db, huge, record_owned(db, {"alice-1": "alice"})["alice-1"]


async def test_another_principal_is_answered_while_a_huge_session_page_is_built(
    tmp_path: Path, huge: tuple[str, str, str]
) -> None:
    db, mallorys, alices = huge
    with ui_app(db, tmp_path / "tokens.json") as app:
        mallory, alice = app.mint("mallory", "reader"), app.mint("alice", "reader")
        async with (
            httpx.AsyncClient(base_url=app.base, timeout=WAIT, headers=_bearer(mallory)) as hers,
            httpx.AsyncClient(base_url=app.base, timeout=WAIT, headers=_bearer(alice)) as own,
        ):
            # Both connections open first, so that mallory's page is asked for before alice's,
            # and what a first page costs once (modules loaded, connections opened) paid.
            assert (await hers.get("api/me")).status_code == 200
            assert (await own.get(f"api/sessions/{alices}")).status_code == 200
            started = time.perf_counter()
            building = asyncio.create_task(hers.get(f"api/sessions/{mallorys}"))
            waits: list[float] = []
            while not building.done():
                asked = time.perf_counter()
                page = await own.get(f"api/sessions/{alices}")
                waits.append(time.perf_counter() - asked)
                assert page.status_code == 200, page.text
                assert len(page.json()["events"]) == 3
            built = await building
            building_took = time.perf_counter() - started
    assert built.status_code == 200, built.text
    assert len(built.json()["events"]) == HUGE_PAGE_THOUGHTS + 1
    # Built on the event loop in one go, the page held every other request until it was built:
    # one of alice's waited about as long as mallory's whole page.
    assert max(waits) < building_took / 3, (max(waits), building_took)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_principal_flooding_requests_waits_its_pace_while_another_is_answered(
    tmp_path: Path, owned: tuple[str, dict[str, str]]
) -> None:
    db, ids = owned
    flood = BURST + 50
    with ui_app(db, tmp_path / "tokens.json") as app:
        mallory, alice = app.mint("mallory", "reader"), app.mint("alice", "reader")
        async with (
            httpx.AsyncClient(base_url=app.base, timeout=WAIT, headers=_bearer(mallory)) as hers,
            httpx.AsyncClient(base_url=app.base, timeout=WAIT, headers=_bearer(alice)) as own,
        ):
            waits: list[float] = []
            flooding = True

            async def alice_reads() -> None:
                while flooding:  # alice is being served throughout mallory's flood
                    asked = time.perf_counter()
                    page = await own.get(f"api/sessions/{ids['alice-1']}")
                    waits.append(time.perf_counter() - asked)
                    assert page.status_code == 200, page.text
                    await asyncio.sleep(0.05)

            # What a first page costs once (modules loaded, connections opened) paid first.
            assert (await own.get(f"api/sessions/{ids['alice-1']}")).status_code == 200
            assert (await hers.get("api/total")).status_code == 200
            reading = asyncio.create_task(alice_reads())
            await asyncio.sleep(0)  # alice's first request goes first
            started = time.perf_counter()
            answers = await asyncio.gather(*(hers.get("api/total") for _ in range(flood)))
            took = time.perf_counter() - started
            flooding = False
            await reading
    assert [answer.status_code for answer in answers] == [200] * flood
    # Past its burst, mallory's requests went at its pace: the last 50 no faster than 50 a
    # second (a lower bound the pace sets, whatever the machine) ...
    assert took >= 0.9 * (flood - BURST) / RATE, took
    # ... while alice's, within hers, were answered as they came.
    # Unpaced, one of hers waits behind the whole flood (about ``took``); half leaves a loaded
    # machine its noise.
    assert max(waits) < took / 2, (max(waits), took)
