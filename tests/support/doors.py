"""The door test's policy table, its seeded ledger and what asks each door what it shows.

Read by ``tests/integration/test_access_doors.py``: for each door, an observer returns the
sessions a principal saw (or wrote) through it, and the policy table says which it should.
"""

import contextlib
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, MCPError
from websockets.asyncio.client import ClientConnection, connect

from tests.support.processes import WAIT
from thoughtledger.api import Ledger, Principal, Role
from thoughtledger.ledger.envelope import RecordedEvent

Json = dict[str, Any]
Who = str | None
"""A principal's name, or ``None`` for no principal at all (a server without ``--auth``)."""

ROLES: dict[str, Role] = {"alice": "writer", "bob": "writer", "rita": "reader", "audrey": "auditor"}
OWNERS: dict[str, Who] = {"a": "alice", "b": "bob", "r": "rita", "n": None}
"""Each seeded session's label and the principal that started it."""
WORD = "doorword"
"""In every seeded thought (and in no thought a door writes), so a search finds them all."""

EVERY = frozenset(OWNERS)
NOTHING: frozenset[str] = frozenset()
READS: dict[Who, frozenset[str]] = {
    "alice": frozenset("a"),
    "bob": frozenset("b"),
    "rita": frozenset("r"),
    "audrey": EVERY,
    None: EVERY,
}
"""The policy: whose sessions each may read (a reader its own; an auditor, and nobody, all)."""
WRITES: dict[Who, frozenset[str]] = {
    "alice": frozenset("a"),
    "bob": frozenset("b"),
    "rita": NOTHING,
    "audrey": NOTHING,
    None: EVERY,
}
"""Whose sessions each may append to (a writer its own; nobody, all; readers, auditors none)."""
READS_ALL: dict[Who, frozenset[str]] = {
    who: EVERY if READS[who] == EVERY else NOTHING for who in READS
}
"""Doors that count every session at once (the analytics): all or nothing."""
ANNOTATES: dict[Who, frozenset[str]] = {**WRITES, "audrey": EVERY}
"""Whose thoughts each may annotate or redact: a writer its own, an auditor any, nobody all."""
OWN_RUNS: dict[Who, frozenset[str]] = {**READS, "audrey": NOTHING}
"""``thinking_insights`` is an agent's look at its own runs: an auditor, as an agent, has none."""
NO_SESSION: dict[Who, frozenset[str]] = dict.fromkeys(READS, NOTHING)
"""Doors that carry no session's data at all (static pages, signing in and out, who am I)."""


@dataclass
class Seeded:
    """The seeded sessions and their forks, by label."""

    sessions: dict[str, str]
    forks: dict[str, str]

    def labels(self, ids: set[str]) -> frozenset[str]:
        """The labels of the seeded sessions among ``ids`` (forks count as their source's)."""
        found = {label for label, sid in self.sessions.items() if sid in ids}
        found |= {label for label, sid in self.forks.items() if sid in ids}
        return frozenset(found)

    def in_text(self, text: str) -> frozenset[str]:
        """The labels of the seeded sessions (or forks) whose id appears in ``text``."""
        return self.labels(
            {sid for sid in [*self.sessions.values(), *self.forks.values()] if sid in text}
        )


def _thought(number: int, text: str = WORD) -> Json:
    return {
        "thought": f"{text} {number}",
        "thought_number": number,
        "total_thoughts": 5,
        "next_thought_needed": True,
    }


async def seed(ledger: Ledger) -> Seeded:
    """One session per owner (two thoughts, the agent named after its owner) and a fork of it."""
    sessions: dict[str, str] = {}
    forks: dict[str, str] = {}
    for label, owner in OWNERS.items():
        scope = ledger.as_principal(Principal(owner, "writer") if owner else None)
        meta = {"agent": owner} if owner else None
        first = await scope.think(None, _thought(1), metadata=meta)
        await scope.think(first.session_id, _thought(2))
        sessions[label] = first.session_id
        fork = await scope.fork(first.session_id, metadata=meta)
        forks[label] = fork.id
    return Seeded(sessions, forks)


# -- the MCP server's doors ------------------------------------------------------------------

Observe = Callable[[Any, Seeded], Awaitable[frozenset[str]]]


async def _tool(client: Client, name: str, arguments: Json) -> Json | None:
    result = await client.call_tool(name, arguments)
    return None if result.is_error else result.structured_content


def _wrote(answer: Json | None, session_id: str) -> bool:
    # The snake-case tools answer in snake case.
    landed = None if answer is None else answer.get("sessionId", answer.get("session_id"))
    return landed == session_id


async def _each(seeded: Seeded, test: Callable[[str], Awaitable[bool]]) -> frozenset[str]:
    return frozenset([label for label, sid in seeded.sessions.items() if await test(sid)])


async def mcp_history(client: Client, seeded: Seeded) -> frozenset[str]:
    async def reads(sid: str) -> bool:
        answer = await _tool(client, "thinking_history", {"sessionId": sid})
        return answer is not None and answer["sessionId"] == sid

    return await _each(seeded, reads)


async def mcp_official(client: Client, seeded: Seeded) -> frozenset[str]:
    async def writes(sid: str) -> bool:
        arguments = {
            "thought": "written through sequentialthinking",
            "thoughtNumber": 3,
            "totalThoughts": 5,
            "nextThoughtNeeded": True,
            "sessionId": sid,
        }
        return _wrote(await _tool(client, "sequentialthinking", arguments), sid)

    return await _each(seeded, writes)


def _snake(tool: str, **extra: Any) -> Observe:
    async def observe(client: Client, seeded: Seeded) -> frozenset[str]:
        async def writes(sid: str) -> bool:
            arguments = {**_thought(3, f"written through {tool}"), "session_id": sid, **extra}
            return _wrote(await _tool(client, tool, arguments), sid)

        return await _each(seeded, writes)

    return observe


async def mcp_batch(client: Client, seeded: Seeded) -> frozenset[str]:
    async def writes(sid: str) -> bool:
        item = {"thought": "written in a batch", "thoughtNumber": 4, "totalThoughts": 5}
        arguments = {"sessionId": sid, "thoughts": [{**item, "nextThoughtNeeded": True}]}
        return _wrote(await _tool(client, "sequential_thinking_batch", arguments), sid)

    return await _each(seeded, writes)


async def mcp_insights(client: Client, seeded: Seeded) -> frozenset[str]:
    answer = await _tool(client, "thinking_insights", {"query": WORD, "limit": 20})
    assert answer is not None
    return seeded.labels({hit["sessionId"] for hit in answer.get("found", [])})


async def mcp_listing(client: Client, seeded: Seeded) -> frozenset[str]:
    contents = (await client.read_resource("thoughtledger://sessions")).contents
    text = getattr(contents[0], "text", "")
    return seeded.labels({row["sessionId"] for row in json.loads(text)["sessions"]})


async def mcp_listing_page(client: Client, seeded: Seeded) -> frozenset[str]:
    # A page after a cursor no listing gave is refused for everyone: it shows no session.
    with pytest.raises(MCPError):
        await client.read_resource("thoughtledger://sessions/page/not-a-cursor")
    return NOTHING


async def mcp_session(client: Client, seeded: Seeded) -> frozenset[str]:
    async def reads(sid: str) -> bool:
        try:
            await client.read_resource(f"thoughtledger://sessions/{sid}")
        except MCPError:
            return False
        return True

    return await _each(seeded, reads)


MCP_TOOLS: dict[str, tuple[Observe, dict[Who, frozenset[str]]]] = {
    "thinking_history": (mcp_history, READS),
    "thinking_insights": (mcp_insights, OWN_RUNS),
    "sequentialthinking": (mcp_official, WRITES),
    "sequential_thinking": (_snake("sequential_thinking"), WRITES),
    "sequential_thinking_external": (
        _snake("sequential_thinking_external", use_llm=False),
        WRITES,
    ),
    "sequential_thinking_batch": (mcp_batch, WRITES),
}
MCP_RESOURCES: dict[str, tuple[Observe, dict[Who, frozenset[str]]]] = {
    "thoughtledger://sessions": (mcp_listing, READS),
    "thoughtledger://sessions/page/{cursor}": (mcp_listing_page, NO_SESSION),
    "thoughtledger://sessions/{session_id}": (mcp_session, READS),
}


# -- the browser view's doors ----------------------------------------------------------------


async def _get(http: httpx.AsyncClient, path: str) -> httpx.Response:
    return await http.get(path)


def _ui_each(path: str) -> Observe:
    async def observe(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
        async def reads(sid: str) -> bool:
            answer = await _get(http, path.format(session_id=sid))
            assert answer.status_code in (200, 404), answer.text
            return answer.status_code == 200

        return await _each(seeded, reads)

    return observe


async def ui_compare(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
    found = set()
    for label, fork_id in seeded.forks.items():
        answer = await _get(http, f"/api/sessions/{fork_id}/compare")
        assert answer.status_code in (200, 404), answer.text
        if answer.status_code == 200:
            found.add(label)
            # The source side is shown only where its session may be read.
            assert answer.json()["source"]["readable"] is True
    return frozenset(found)


async def ui_live(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
    async def reads(sid: str) -> bool:
        async with http.stream("GET", f"/api/sessions/{sid}/live") as answer:
            assert answer.status_code in (200, 404)
            return answer.status_code == 200

    return await _each(seeded, reads)


async def ui_listing(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
    answer = await _get(http, "/api/sessions?limit=50")
    assert answer.status_code == 200, answer.text
    return seeded.labels({row["sessionId"] for row in answer.json()["sessions"]})


async def ui_badges(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
    ids = ",".join(seeded.sessions.values())
    answer = await _get(http, f"/api/badges?ids={ids}")
    assert answer.status_code == 200, answer.text
    return seeded.labels({badge["sessionId"] for badge in answer.json()["badges"]})


async def ui_review(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
    answer = await _get(http, f"/api/review?q={WORD}")
    assert answer.status_code == 200, answer.text
    return seeded.labels({item["sessionId"] for item in answer.json()["items"]})


async def ui_total(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
    # A count names no session; it counts the sessions the listing shows, no more.
    answer = await _get(http, "/api/total")
    assert answer.status_code == 200, answer.text
    listed = await _get(http, "/api/sessions?limit=50")
    assert answer.json()["total"] == len(listed.json()["sessions"])
    return NOTHING


async def ui_stats(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
    answer = await _get(http, "/api/stats")
    assert answer.status_code in (200, 403), answer.text
    return EVERY if answer.status_code == 200 else NOTHING


async def ui_search(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
    answer = await _get(http, f"/api/search?q={WORD}&limit=50")
    assert answer.status_code == 200, answer.text
    return seeded.labels({hit["sessionId"] for hit in answer.json()["results"]})


def _ui_text(method: str, path: str) -> Observe:
    async def observe(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
        some = next(iter(seeded.sessions.values()))
        answer = await http.request(method, path.format(session_id=some, name="app.js"))
        return seeded.in_text(answer.text) - (
            # A page's address holds the id it was asked for; the page itself holds no data.
            seeded.labels({some}) if "{session_id}" in path else NOTHING
        )

    return observe


def _ui_act(act: str, body: Json, *, missing: bool = False) -> Observe:
    """POST an act to each seeded session; the ones it landed in (the answer names the session).

    The page's own ``Origin`` goes with it, as a browser sends it (a bearer token needs none).
    ``missing``: the body names a thought no session has, so an act the door lets through is
    answered 400 for that thought (a refused one 403 or 404) and nothing is written.
    """

    async def observe(http: httpx.AsyncClient, seeded: Seeded) -> frozenset[str]:
        origin = str(http.base_url).rstrip("/")

        async def acts(sid: str) -> bool:
            path = f"/api/sessions/{sid}/{act}"
            answer = await http.post(path, json=body, headers={"Origin": origin}, timeout=WAIT)
            if missing:
                assert answer.status_code in (400, 403, 404), answer.text
                return answer.status_code == 400 and "99" in answer.json()["error"]
            assert answer.status_code in (200, 403, 404), answer.text
            if answer.status_code != 200:
                return False
            found = answer.json()
            return sid in (found.get("sessionId"), found.get("forkOf"))

        return await _each(seeded, acts)

    return observe


UI_ROUTES: dict[str, tuple[Observe, dict[Who, frozenset[str]]]] = {
    "/api/sessions": (ui_listing, READS),
    "/api/badges": (ui_badges, READS),
    "/api/total": (ui_total, NO_SESSION),
    "/api/review": (ui_review, READS),
    "/review": (_ui_text("GET", "/review"), NO_SESSION),
    "/api/sessions/{session_id}": (_ui_each("/api/sessions/{session_id}"), READS),
    "/api/sessions/{session_id}/verify": (_ui_each("/api/sessions/{session_id}/verify"), READS),
    "/api/sessions/{session_id}/forks": (_ui_each("/api/sessions/{session_id}/forks"), READS),
    "/api/sessions/{session_id}/compare": (ui_compare, READS),
    "/api/sessions/{session_id}/live": (ui_live, READS),
    "/api/stats": (ui_stats, READS_ALL),
    "/api/search": (ui_search, READS),
    "/api/me": (_ui_text("GET", "/api/me"), NO_SESSION),
    "/api/signin": (_ui_text("POST", "/api/signin"), NO_SESSION),
    "/api/signout": (_ui_text("POST", "/api/signout"), NO_SESSION),
    "/": (_ui_text("GET", "/"), NO_SESSION),
    "/sessions/{session_id}": (_ui_text("GET", "/sessions/{session_id}"), NO_SESSION),
    "/sessions/{session_id}/compare": (
        _ui_text("GET", "/sessions/{session_id}/compare"),
        NO_SESSION,
    ),
    "/analytics": (_ui_text("GET", "/analytics"), NO_SESSION),
    "/search": (_ui_text("GET", "/search"), NO_SESSION),
    "/static/{name}": (_ui_text("GET", "/static/{name}"), NO_SESSION),
    # The acts last: the reads above see the seeded sessions as they were.
    "/api/sessions/{session_id}/annotate": (
        _ui_act("annotate", {"thought": 1, "label": "door"}),
        ANNOTATES,
    ),
    # A thought no session has: a redaction on SQLite empties the write-ahead log, which the
    # serve process beside this one keeps in use (test_ui_browser_acts*.py redact for real).
    "/api/sessions/{session_id}/redact": (
        _ui_act("redact", {"thought": 99, "reason": "door"}, missing=True),
        ANNOTATES,
    ),
    "/api/sessions/{session_id}/fork": (_ui_act("fork", {}), WRITES),
}
UI_SOCKETS = ("/ws", "/api/ws")
"""The browser view's live socket: at ``serve --http``'s path, and at its earlier one."""

OTLP_TEXT = "captured at the otlp door"
"""The reasoning each OTLP door post carries (with the door and the principal)."""


def _otlp_body(path: str, conversation: str, text: str) -> bytes:
    """An export request (built with the official messages) carrying one reasoning part."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    messages = [{"role": "assistant", "parts": [{"type": "reasoning", "content": text}]}]
    attributes = [
        KeyValue(key="gen_ai.output.messages", value=AnyValue(string_value=json.dumps(messages))),
        KeyValue(key="gen_ai.conversation.id", value=AnyValue(string_value=conversation)),
    ]
    ids = {"trace_id": os.urandom(16), "span_id": os.urandom(8)}
    if path == "/v1/traces":
        traces = ExportTraceServiceRequest()
        span = traces.resource_spans.add().scope_spans.add().spans.add(name="chat m", **ids)
        span.attributes.extend(attributes)
        return bytes(traces.SerializeToString())
    logs = ExportLogsServiceRequest()
    record = logs.resource_logs.add().scope_logs.add().log_records.add(**ids)
    record.attributes.extend(attributes)
    return bytes(logs.SerializeToString())


async def otlp_lands(
    base: str,
    path: str,
    token: str | None,
    who: Who,
    seeded: Seeded,
    events: Callable[[str], Awaitable[list[RecordedEvent]]],
) -> frozenset[str]:
    """The seeded sessions a post naming each as its conversation landed in."""
    text = f"{OTLP_TEXT} {path} {who}"
    headers = {"Content-Type": "application/x-protobuf"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        for sid in seeded.sessions.values():
            answer = await http.post(
                base + path, content=_otlp_body(path, sid, text), headers=headers
            )
            assert answer.status_code in (200, 403), answer.content
    landed = set()
    for label, sid in seeded.sessions.items():
        held = await events(sid)
        if any(getattr(r.event, "thought", None) == text for r in held):
            landed.add(label)
    return frozenset(landed)


OTLP_ROUTES: dict[str, dict[Who, frozenset[str]]] = {"/v1/traces": WRITES, "/v1/logs": WRITES}
"""The OTLP receiver's routes (on serve --http and receive): a post lands where one may write."""


# -- the live sockets ------------------------------------------------------------------------


async def socket_sees(url: str, token: str | None, seeded: Seeded) -> frozenset[str]:
    """What a live socket lets ``token`` follow: each session by name, then "all" from 0."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with connect(url, additional_headers=headers, open_timeout=WAIT) as socket:
        named = set()
        for label, sid in seeded.sessions.items():
            await socket.send(json.dumps({"op": "subscribe", "id": label, "sessions": [sid]}))
            answer = await _next(socket)
            if answer["type"] == "subscribed":
                named.add(label)
                await socket.send(json.dumps({"op": "unsubscribe", "id": label}))
                while (await _next(socket))["type"] != "unsubscribed":
                    pass
        await socket.send(json.dumps({"op": "subscribe", "id": "all", "sessions": "all"}))
        assert (await _next(socket))["type"] == "subscribed"
        followed: set[str] = set()
        # The sessions it may follow arrive first, each within WAIT however loaded the machine;
        # then a quiet second shows any session it may not follow.
        while not frozenset(named) <= seeded.labels(followed):
            message = await _next(socket)
            if message["type"] == "event":
                followed.add(message["session"])
        with contextlib.suppress(TimeoutError):
            while True:
                message = await _next(socket, wait=1.0)
                if message["type"] == "event":
                    followed.add(message["session"])
    assert seeded.labels(followed) == frozenset(named), (named, followed)
    return frozenset(named)


async def _next(socket: ClientConnection, wait: float = WAIT) -> Json:
    with anyio.fail_after(wait):
        found: Json = json.loads(await socket.recv())
    return found


# -- the registries --------------------------------------------------------------------------
