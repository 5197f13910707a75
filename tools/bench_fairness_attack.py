"""The principal doing its worst within its rights, for ``tools/bench fairness``.

Run in a process of its own (``bench_fairness.py attack MCP_URL UI_BASE TOKEN SESSION SECONDS``),
so that its own work does not slow the measuring client. It first takes all it may hold open
(live sockets on both servers and event streams of its own session until refused, MCP sessions
until refused), prints what it holds as one JSON line, then for ``SECONDS`` keeps signing in,
opening the live feed of its huge session, reading its session page and searching, on both
servers at once, as fast as the answers come; it prints what it did as a second line.
``THOUGHTLEDGER_BENCH_FLOODS=name,name`` runs only those floods (to find which one costs the
other principal most).
"""

import asyncio
import contextlib
import json
import os
import sys
import time
from collections import Counter
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

OPEN_ATTEMPTS = 200
"""Sockets, streams and MCP sessions it tries to open of each kind (each refused past its share)."""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "mallory", "version": "1"},
    },
}
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


async def _sockets(
    url: str, token: str, held: contextlib.AsyncExitStack, tally: Counter[str]
) -> None:
    for _ in range(OPEN_ATTEMPTS):
        try:
            await held.enter_async_context(
                connect(url, additional_headers={"Authorization": f"Bearer {token}"})
            )
            tally[f"{url.rsplit('/', 1)[-1]} sockets held"] += 1
        except InvalidStatus as exc:
            tally[f"{url.rsplit('/', 1)[-1]} sockets refused {exc.response.status_code}"] += 1


async def _streams(
    ui: httpx.AsyncClient, session: str, held: contextlib.AsyncExitStack, tally: Counter[str]
) -> None:
    for _ in range(OPEN_ATTEMPTS):
        stream = await held.enter_async_context(
            ui.stream("GET", f"api/sessions/{session}/live", params={"after": 2**62})
        )
        tally[f"ui streams {stream.status_code}"] += 1
        if stream.status_code != 200:
            await stream.aread()


async def _mcp_sessions(http: httpx.AsyncClient, url: str, tally: Counter[str]) -> None:
    for _ in range(OPEN_ATTEMPTS):
        answer = await http.post(url, json=INITIALIZE, headers=MCP_ACCEPT)
        tally[f"mcp sessions {answer.status_code}"] += 1


async def _flood(name: str, work: Any, until: float, tally: Counter[str]) -> None:
    while time.monotonic() < until:
        try:
            status = await work()
        except httpx.HTTPError as exc:
            status = type(exc).__name__
        tally[f"{name} {status}"] += 1


async def attack(mcp_url: str, ui_base: str, token: str, session: str, seconds: float) -> None:
    """Hold all it may, then flood for ``seconds`` (see the module docstring)."""
    tally: Counter[str] = Counter()
    headers = {"Authorization": f"Bearer {token}"}
    base = mcp_url.removesuffix("/mcp")
    async with (
        contextlib.AsyncExitStack() as held,
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        httpx.AsyncClient(base_url=ui_base, headers=headers, timeout=60) as ui,
        httpx.AsyncClient(base_url=ui_base, timeout=60) as browser,
        httpx2.AsyncClient(headers=headers, timeout=60) as mcp_http,
        Client(streamable_http_client(mcp_url, http_client=mcp_http), mode="legacy") as client,
    ):
        # Its one MCP client first, for the search flood: then every session it may hold.
        await _sockets(base.replace("http://", "ws://") + "/ws", token, held, tally)
        await _sockets(ui_base.replace("http://", "ws://") + "api/ws", token, held, tally)
        await _streams(ui, session, held, tally)
        await _mcp_sessions(http, mcp_url, tally)
        print(json.dumps(dict(tally)), flush=True)
        tally.clear()
        last = 2**62

        async def sign_in() -> int:
            answer = await browser.post(
                "api/signin", json={"token": token}, headers={"Origin": ui_base.rstrip("/")}
            )
            return answer.status_code

        async def feed() -> int:
            async with ui.stream(
                "GET", f"api/sessions/{session}/live", params={"after": last}
            ) as stream:
                return stream.status_code

        async def page() -> int:
            return (await ui.get(f"api/sessions/{session}")).status_code

        async def ui_search() -> int:
            return (await ui.get("api/search", params={"q": "option weighs"})).status_code

        async def serve_search() -> int:
            result = await client.call_tool("thinking_insights", {"query": "option weighs"})
            return 500 if result.is_error else 200

        async def initialize() -> int:
            return (await http.post(mcp_url, json=INITIALIZE, headers=MCP_ACCEPT)).status_code

        until = time.monotonic() + seconds
        floods = {
            "sign-ins": sign_in,
            "feed opens": feed,
            "session pages": page,
            "ui searches": ui_search,
            "initialize": initialize,
            "serve searches": serve_search,
        }
        only = os.environ.get("THOUGHTLEDGER_BENCH_FLOODS")  # to find which one costs most
        chosen = only.split(",") if only else list(floods)
        await asyncio.gather(*(_flood(name, floods[name], until, tally) for name in chosen))
    print(json.dumps(dict(tally)), flush=True)


if __name__ == "__main__":
    mcp, base, token, huge = sys.argv[1:5]
    asyncio.run(attack(mcp, base, token, huge, float(sys.argv[5])))
