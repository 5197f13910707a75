"""Every door against every kind of principal: what each sees and writes is the policy table's.

One ledger holds a session of each writer (alice, bob), one of a principal who now holds only a
reader token (rita), and one nobody owns (recorded by the ledger's own user), each with a fork
of its own. Then every door that exists is asked, by each principal, about each session:

* every MCP tool under ``--tools all`` and every resource, over HTTP, from a real
  ``serve --http --auth`` process, and its live socket (``/ws``);
* every JSON route and page of a real ``ui --auth`` process, and its live socket (``/api/ws``);
* the OTLP receiver's routes of the same ``serve --http`` process (``/v1/traces``,
  ``/v1/logs``): a post naming each session as its conversation lands only where one may write;
* the same two servers without ``--auth`` (no principal: the ledger's own user);
* the in-process tool, for each principal and for none.

The doors are read from the servers' own registries (the tools and resources an MCP client
lists, the browser view's routes, ``serve``'s socket path): a door added without a row here
fails :func:`test_every_door_has_a_row`. The CLI has no door of this kind: every command runs as
the ledger's own user and takes no principal.

The table is checked on SQLite and PostgreSQL against real processes. A memory ledger lives in
one process, so there the browser view runs in-process (its ASGI app over the same ledger) and
the tool and the API's door are asked directly; the MCP server's HTTP doors need a process and
are checked on the two databases.
"""

import ast
import asyncio
import contextlib
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route, WebSocketRoute

import thoughtledger.adapters
from tests.support.auth import serving_with_auth
from tests.support.backends import Backend
from tests.support.doors import (
    EVERY,
    MCP_RESOURCES,
    MCP_TOOLS,
    OTLP_ROUTES,
    READS,
    ROLES,
    UI_ROUTES,
    UI_SOCKETS,
    WORD,
    WRITES,
    Json,
    Seeded,
    Who,
    otlp_lands,
    seed,
    socket_sees,
)
from tests.support.processes import WAIT, serving_http
from tests.support.ui_app import UiApp, ui_app
from thoughtledger.adapters.auth.tokens import TokenFile, load_tokens_or_empty, save_tokens
from thoughtledger.adapters.auth.verifier import FileTokenVerifier
from thoughtledger.adapters.mcp.http.serving import WS_PATH
from thoughtledger.adapters.mcp.server import TOOL_NAMES, create_server
from thoughtledger.adapters.otel.receiver import Receiver
from thoughtledger.adapters.tool import sequential_thinking_tool
from thoughtledger.adapters.ui.routes import create_app
from thoughtledger.api import AccessDeniedError, Ledger, Principal, open_ledger
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import LedgerError

pytestmark = pytest.mark.anyio


def _routes(app: Any) -> list[BaseRoute]:
    while not isinstance(app, Starlette):
        app = app.app  # through the guards and headers each wraps the app in
    return list(app.routes)


def ui_registry() -> set[str]:
    """The browser view's routes, from the app it serves."""
    app = create_app(Ledger.__new__(Ledger))
    return {route.path for route in _routes(app) if isinstance(route, Route | WebSocketRoute)}


def otlp_registry() -> set[str]:
    """The OTLP receiver's routes, from the receiver itself."""
    routes = Receiver(Ledger.__new__(Ledger), None).routes()
    return {route.path for route in routes if isinstance(route, Route)}


async def mcp_registry(client: Client) -> tuple[set[str], set[str]]:
    tools = {tool.name for tool in (await client.list_tools()).tools}
    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    return tools, resources | templates


async def test_every_door_has_a_row() -> None:
    assert ui_registry() == {*UI_ROUTES, *UI_SOCKETS}
    assert otlp_registry() == set(OTLP_ROUTES)
    async with (
        open_ledger("memory://") as ledger,
        Client(create_server(ledger, tools=TOOL_NAMES)) as client,
    ):
        tools, resources = await mcp_registry(client)
    assert tools == set(MCP_TOOLS) == set(TOOL_NAMES)
    assert resources == set(MCP_RESOURCES)
    assert WS_PATH == "/ws"  # serve's socket: the ui's LiveSocket, checked below as "/ws"


def test_no_adapter_decides_who_may_see_what() -> None:
    # The rules are the access door's: an adapter passes the principal and shows the answer.
    rules = re.compile(r"\bowner_of\b|\.may_read\(|\.may_write\(|\bnamespaced\(|\.role [!=]=")
    adapters = Path(thoughtledger.adapters.__file__).parent
    found = [
        f"{path.relative_to(adapters)}:{number}: {line.strip()}"
        for path in sorted(adapters.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if rules.search(line)
    ]
    assert found == []


FOLDS = ("thoughtledger.projections.loops", "thoughtledger.projections.fastfold")
"""What derives loop marks and folds rows: the API's to run, never an adapter's."""


def test_no_adapter_folds_derived_data_itself() -> None:
    # lint-imports holds this for imports at run time; this also sees the ones it leaves out
    # (under TYPE_CHECKING, inside a function, or of the module through its package).
    adapters = Path(thoughtledger.adapters.__file__).parent
    found = []
    for path in sorted(adapters.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module is not None:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            for name in names:
                if any(name == fold or name.startswith(f"{fold}.") for fold in FOLDS):
                    found.append(f"{path.relative_to(adapters)}:{node.lineno}: {name}")
    assert found == []


# -- the checks ------------------------------------------------------------------------------


def _mint(token_file: Path) -> dict[str, str]:
    tokens = load_tokens_or_empty(token_file) if token_file.exists() else TokenFile()
    minted = {}
    for name, role in ROLES.items():
        tokens, token, _ = tokens.add(name, role, now=_now())
        minted[name] = token
    save_tokens(token_file, tokens)
    return minted


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Seen:
    """What each door showed each principal, beside what the policy says it should."""

    rows: dict[tuple[str, Who], tuple[frozenset[str], frozenset[str]]]

    def check(self) -> None:
        wrong = {key: value for key, value in self.rows.items() if value[0] != value[1]}
        assert not wrong, "\n".join(
            f"{door} as {who}: saw {sorted(seen)}, policy says {sorted(want)}"
            for (door, who), (seen, want) in sorted(wrong.items(), key=str)
        )


async def _mcp_doors(url: str, token: str | None, who: Who, seeded: Seeded, seen: Seen) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=WAIT) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        tools, resources = await mcp_registry(client)
        assert tools == set(MCP_TOOLS)
        assert resources == set(MCP_RESOURCES)
        # Reading first: the writes below start the principal's own derived sessions.
        for name, (observe, policy) in {**MCP_RESOURCES, **MCP_TOOLS}.items():
            seen.rows[(f"mcp {name}", who)] = (await observe(client, seeded), policy[who])


async def _ui_doors(http: httpx.AsyncClient, who: Who, seeded: Seeded, seen: Seen) -> None:
    for path, (observe, policy) in UI_ROUTES.items():
        seen.rows[(f"ui {path}", who)] = (await observe(http, seeded), policy[who])


async def _tool_door(ledger: Ledger, who: Who, seeded: Seeded, seen: Seen) -> None:
    principal = Principal(who, ROLES[who]) if who is not None else None
    landed = set()
    for label, sid in seeded.sessions.items():
        tool = sequential_thinking_tool(ledger, principal=principal)
        try:
            answer = await tool.execute({**_tool_args(), "sessionId": sid})
        except AccessDeniedError:
            continue
        if answer["sessionId"] == sid:
            landed.add(label)
    seen.rows[("in-process tool", who)] = (frozenset(landed), WRITES[who])


def _tool_args() -> Json:
    return {
        "thought": "written by the in-process tool",
        "thoughtNumber": 3,
        "totalThoughts": 5,
        "nextThoughtNeeded": True,
    }


async def _api_door(ledger: Ledger, who: Who, seeded: Seeded, seen: Seen) -> None:
    scope = ledger.as_principal(Principal(who, ROLES[who]) if who is not None else None)
    listed = seeded.labels({s.session_id for s in (await scope.sessions(limit=100)).sessions})
    seen.rows[("api sessions", who)] = (listed, READS[who])
    readable = set()
    for label, sid in seeded.sessions.items():
        # Another's id may name the principal's own session under its derived id (a thought
        # written to it landed there): that is not the session asked for.
        with contextlib.suppress(LedgerError):
            if (await scope.state(sid)).session_id == sid:
                readable.add(label)
    seen.rows[("api state", who)] = (frozenset(readable), READS[who])
    hits = (await scope.search(WORD, limit=50)).results
    seen.rows[("api search", who)] = (seeded.labels({h.session_id for h in hits}), READS[who])


async def test_every_door_shows_each_principal_what_the_policy_says(
    backend: Backend, tmp_path: Path
) -> None:
    seen = Seen({})
    if backend.url is None:
        await _memory_doors(tmp_path, seen)
    else:
        await _server_doors(backend.url, tmp_path, seen)
    seen.check()


async def _server_doors(db: str, tmp_path: Path, seen: Seen) -> None:
    async with open_ledger(db, ttl=None) as ledger:
        seeded = await seed(ledger)

    async def reader(session_id: str) -> list[RecordedEvent]:
        async with open_ledger(db, read_only=True) as ledger:
            return await ledger.events(session_id)

    with anyio.fail_after(20 * WAIT):
        async with serving_with_auth(tmp_path, "--tools", "all", db=db) as server:
            tokens = _mint(server.token_file)
            ws = server.url.replace("http://", "ws://").replace("/mcp", WS_PATH)
            with ui_app(db, server.token_file) as ui:
                for who in ROLES:
                    seen.rows[("serve /ws", who)] = (
                        await socket_sees(ws, tokens[who], seeded),
                        READS[who],
                    )
                    for path in UI_SOCKETS:
                        seen.rows[(f"ui {path}", who)] = (
                            await socket_sees(_ui_ws(ui, path), tokens[who], seeded),
                            READS[who],
                        )
                    async with httpx.AsyncClient(
                        base_url=ui.base, headers=_bearer(tokens[who])
                    ) as http:
                        await _ui_doors(http, who, seeded, seen)
                    await _mcp_doors(server.url, tokens[who], who, seeded, seen)
                    base = server.url.removesuffix("/mcp")
                    for path, policy in OTLP_ROUTES.items():
                        lands = await otlp_lands(base, path, tokens[who], who, seeded, reader)
                        seen.rows[(f"otlp {path}", who)] = (lands, policy[who])
        async with serving_http(db, "--tools", "all") as url:
            ws = url.replace("http://", "ws://").replace("/mcp", WS_PATH)
            with ui_app(db, None) as ui:
                seen.rows[("serve /ws", None)] = (await socket_sees(ws, None, seeded), EVERY)
                for path in UI_SOCKETS:
                    seen.rows[(f"ui {path}", None)] = (
                        await socket_sees(_ui_ws(ui, path), None, seeded),
                        EVERY,
                    )
                async with httpx.AsyncClient(base_url=ui.base) as http:
                    await _ui_doors(http, None, seeded, seen)
                await _mcp_doors(url, None, None, seeded, seen)
                for path, policy in OTLP_ROUTES.items():
                    lands = await otlp_lands(
                        url.removesuffix("/mcp"), path, None, None, seeded, reader
                    )
                    seen.rows[(f"otlp {path}", None)] = (lands, policy[None])
    everyone: list[Who] = [*ROLES, None]
    async with open_ledger(db, ttl=None) as ledger:
        for caller in everyone:
            await _api_door(ledger, caller, seeded, seen)
            await _tool_door(ledger, caller, seeded, seen)


async def _memory_doors(tmp_path: Path, seen: Seen) -> None:
    # A memory ledger lives in this process: its browser view is served from here, on a real
    # loopback port (the live routes stream), over the same ledger the API's door is asked of.
    token_file = tmp_path / "tokens.json"
    tokens = _mint(token_file)
    async with open_ledger("memory://", ttl=None) as ledger:
        seeded = await seed(ledger)
        guarded = create_app(ledger, verifier=FileTokenVerifier(token_file))
        async with _serving(guarded) as base:
            for who in ROLES:
                for path in UI_SOCKETS:
                    ws = base.replace("http://", "ws://") + path
                    sees = await socket_sees(ws, tokens[who], seeded)
                    seen.rows[(f"ui {path}", who)] = (sees, READS[who])
                async with httpx.AsyncClient(base_url=base, headers=_bearer(tokens[who])) as http:
                    await _ui_doors(http, who, seeded, seen)
        async with _serving(create_app(ledger)) as base:
            for path in UI_SOCKETS:
                ws = base.replace("http://", "ws://") + path
                seen.rows[(f"ui {path}", None)] = (await socket_sees(ws, None, seeded), EVERY)
            async with httpx.AsyncClient(base_url=base) as http:
                await _ui_doors(http, None, seeded, seen)
        everyone: list[Who] = [*ROLES, None]
        for caller in everyone:
            verifier = FileTokenVerifier(token_file) if caller is not None else None
            receiver = Starlette(routes=Receiver(ledger, verifier).routes())
            async with _serving(receiver) as base:
                for path, policy in OTLP_ROUTES.items():
                    token = tokens[caller] if caller is not None else None
                    lands = await otlp_lands(base, path, token, caller, seeded, ledger.events)
                    seen.rows[(f"otlp {path}", caller)] = (lands, policy[caller])
        for caller in everyone:
            await _api_door(ledger, caller, seeded, seen)
            await _tool_door(ledger, caller, seeded, seen)


@contextlib.asynccontextmanager
async def _serving(app: Any) -> AsyncIterator[str]:
    # Bound and listening before the server starts: a client connecting at once is queued.
    listening = socket.create_server(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _ui_ws(ui: UiApp, path: str) -> str:
    return f"ws://127.0.0.1:{ui.port}{path}"


__all__: list[str] = []
