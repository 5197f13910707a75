"""The per-principal session cap follows sessions the way the SDK keeps them.

The real MCP application in this process, behind :class:`SessionCap` with a clock the test
moves: an idle session stops counting once the idle timeout has passed (the SDK ends it then
too), a session still in use counts again, and the refusal says when a slot frees up.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest

from tests.support.auth import MCP_ACCEPT, end_session, open_session
from thoughtledger.adapters.mcp import create_server
from thoughtledger.adapters.mcp.http.session_cap import SessionCap
from thoughtledger.api.bootstrap import open_ledger

pytestmark = pytest.mark.anyio
IDLE = 60.0


class Clock:
    """Monotonic seconds that move only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Capped(httpx2.AsyncClient):
    """A client of the capped application; ``inner`` reaches the application around the cap."""

    inner: httpx2.AsyncClient


@asynccontextmanager
async def capped(per_principal: int, clock: Clock) -> AsyncIterator[Capped]:
    async with open_ledger("memory://") as ledger:
        server = create_server(ledger)
        # The SDK's own idle timer runs on real time: long enough never to fire here.
        app = server.streamable_http_app(session_idle_timeout=IDLE)
        cap = SessionCap(app, per_principal=per_principal, idle_timeout=IDLE, clock=clock)
        base = "http://127.0.0.1:8765"
        async with (
            server.session_manager.run(),
            Capped(transport=httpx2.ASGITransport(app=cap), base_url=base) as http,
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=base) as inner,
        ):
            http.inner = inner
            yield http


async def _ping(http: httpx2.AsyncClient, session_id: str) -> httpx2.Response:
    return await http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={**MCP_ACCEPT, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"},
    )


async def test_an_idle_session_stops_counting_once_the_idle_timeout_has_passed() -> None:
    clock = Clock()
    async with capped(1, clock) as http:
        first = await open_session(http, "/mcp")
        clock.now = 20.0
        refused = await open_session(http, "/mcp")
        clock.now = IDLE + 1
        second = await open_session(http, "/mcp")
    assert (first.status_code, refused.status_code, second.status_code) == (200, 429, 200)
    assert refused.headers["retry-after"] == "40"  # the first one idles out 40 s later
    assert "an idle one closes in 1 min" in refused.json()["error"]["message"]


async def test_a_session_still_in_use_counts_however_long_ago_it_opened() -> None:
    clock = Clock()
    async with capped(1, clock) as http:
        first = await open_session(http, "/mcp")
        session = first.headers["mcp-session-id"]
        clock.now = IDLE - 1
        assert (await _ping(http, session)).status_code == 202
        clock.now = IDLE + 1  # 62 s after opening, but only 2 s after its last request
        refused = await open_session(http, "/mcp")
        ended = await end_session(http, "/mcp", session)
        reopened = await open_session(http, "/mcp")
    assert (refused.status_code, ended.status_code, reopened.status_code) == (429, 200, 200)


async def test_a_session_forgotten_too_early_is_counted_again_when_it_is_used() -> None:
    clock = Clock()
    async with capped(1, clock) as http:
        first = await open_session(http, "/mcp")
        clock.now = IDLE + 1  # idle here; the SDK, on real time, still keeps it
        second = await open_session(http, "/mcp")
        used = await _ping(http, first.headers["mcp-session-id"])
        third = await open_session(http, "/mcp")
    assert (second.status_code, used.status_code, third.status_code) == (200, 202, 429)
    assert "holds 1 open MCP sessions" in third.json()["error"]["message"]


async def test_a_session_ended_behind_the_caps_back_is_forgotten_on_its_404() -> None:
    clock = Clock()
    async with capped(1, clock) as http:
        first = await open_session(http, "/mcp")
        session = first.headers["mcp-session-id"]
        refused = await open_session(http, "/mcp")
        # Ended where the cap cannot see it (as the SDK ends a session on its own): still counted.
        assert (await end_session(http.inner, "/mcp", session)).status_code == 200
        still = await open_session(http, "/mcp")
        gone = await _ping(http, session)
        again = await open_session(http, "/mcp")
    assert (first.status_code, refused.status_code, still.status_code) == (200, 429, 429)
    assert (gone.status_code, again.status_code) == (404, 200)


async def test_openings_at_once_fill_the_cap_exactly() -> None:
    clock = Clock()
    answers: list[int] = []
    async with capped(8, clock) as http:

        async def opening() -> None:
            answers.append((await open_session(http, "/mcp")).status_code)

        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(opening)
        answers.append((await open_session(http, "/mcp")).status_code)
    assert answers == [200] * 8 + [429]
