"""Paged ``thinking_history`` over MCP: in-process clients in both modes and a real stdio pipe."""

import json
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from tests.support.factories import long_session
from tests.support.mcp import Json, Mode, call, connect, event_count, refused, text_of
from tests.support.processes import ROOT, child_env, serve_command, sqlite_in
from tests.support.raw_store import raw_store
from tests.support.samples import thought
from thoughtledger import open_ledger
from thoughtledger.adapters.mcp.tools.reading import WHOLE_READ_MAX
from thoughtledger.api.service import Ledger

pytestmark = pytest.mark.anyio


async def _record(ledger: Ledger, count: int, *, text: str = "") -> None:
    for n in range(1, count + 1):
        extra: Json = {"branch_from_thought": 1, "branch_id": "alt"} if n % 4 == 0 else {}
        if text:
            extra["thought"] = f"{n} {text}"
        await ledger.think("s", thought(n, count, **extra))


async def _pages(client: Client, **arguments: object) -> list[Json]:
    pages = [await call(client, "thinking_history", {"sessionId": "s", **arguments})]
    while pages[-1]["more"]:
        cursor = pages[-1]["nextCursor"]
        pages.append(
            await call(client, "thinking_history", {"sessionId": "s", "after": cursor, **arguments})
        )
    return pages


async def test_history_pages_concatenate_to_every_thought(ledger: Ledger, mode: Mode) -> None:
    await _record(ledger, 25)
    async with connect(ledger, mode) as client:
        pages = await _pages(client, limit=10)
    assert [len(page["history"]) for page in pages] == [10, 10, 5]
    assert [item for page in pages for item in page["history"]] == await ledger.session(
        "s"
    ).history()
    assert "nextCursor" not in pages[-1]
    assert {page["thoughtHistoryLength"] for page in pages} == {25}


async def test_a_branch_is_paged_alone_and_an_unknown_one_refused(
    ledger: Ledger, mode: Mode
) -> None:
    await _record(ledger, 25)
    async with connect(ledger, mode) as client:
        pages = await _pages(client, limit=2, branch="alt")
        message = await refused(client, "thinking_history", {"sessionId": "s", "branch": "nope"})
    assert [t["thoughtNumber"] for page in pages for t in page["history"]] == [4, 8, 12, 16, 20, 24]
    assert {page["branch"] for page in pages} == {"alt"}
    assert message == "session 's' has no branch 'nope'"


async def test_an_answer_stays_within_its_byte_cap(ledger: Ledger, mode: Mode) -> None:
    await _record(ledger, 12, text="x" * 3000)
    await ledger.think("s", thought(13, 13, thought="huge " + "y" * 20_000))
    async with connect(ledger, mode) as client:
        results = []
        after: str | None = None
        while True:
            arguments: Json = {"sessionId": "s", "maxBytes": 8192}
            if after is not None:
                arguments["after"] = after
            result = await client.call_tool("thinking_history", arguments)
            assert result.structured_content is not None
            results.append((len(text_of(result).encode()), result.structured_content))
            if not result.structured_content["more"]:
                break
            after = result.structured_content["nextCursor"]
    *capped, (_, last) = results
    assert all(size <= 8192 for size, _ in capped)
    assert all(len(page["history"]) >= 1 for _, page in results)
    assert [t["thoughtNumber"] for t in last["history"]] == [13]  # larger than the cap: alone
    numbers = [t["thoughtNumber"] for _, page in results for t in page["history"]]
    assert numbers == list(range(1, 14))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"after": "not-a-cursor"}, "not a history cursor"),
        ({"limit": 0}, "Invalid thinking_history params"),
        ({"limit": 1001}, "Invalid thinking_history params"),
        ({"maxBytes": 10}, "Invalid thinking_history params"),
        ({"show": "branches", "branch": "alt"}, "after and branch page show=history"),
    ],
)
async def test_bad_paging_arguments_are_refused_and_append_nothing(
    ledger: Ledger, mode: Mode, arguments: Json, message: str
) -> None:
    await _record(ledger, 5)
    before = await event_count(ledger)
    async with connect(ledger, mode) as client:
        said = await refused(client, "thinking_history", {"sessionId": "s", **arguments})
        assert (await call(client, "thinking_history", {"sessionId": "s"}))["more"] is False
    assert message in said
    assert await event_count(ledger) == before


async def test_branches_and_view_of_a_session_too_long_to_read_whole_point_to_pages(
    ledger: Ledger, mode: Mode
) -> None:
    version = await long_session(raw_store(ledger), "s", WHOLE_READ_MAX)
    async with connect(ledger, mode) as client:
        said = await refused(client, "thinking_history", {"sessionId": "s", "show": "view"})
        early = {"sessionId": "s", "show": "branches", "asOfVersion": 3}
        assert "show=branches reads a session whole" in await refused(
            client, "thinking_history", early
        )
        page = await call(client, "thinking_history", {"sessionId": "s", "limit": 3})
        end = await call(client, "thinking_history", {"sessionId": "s", "asOfVersion": 4})
    assert said == (
        f"session 's' has {version:,} events: show=view reads a session whole, up to "
        f"{WHOLE_READ_MAX:,}; read it page by page with show=history (limit, after, branch)"
    )
    assert [t["thoughtNumber"] for t in page["history"]] == [1, 2, 3]
    assert (page["more"], page["thoughtHistoryLength"]) == (True, WHOLE_READ_MAX)
    assert (end["more"], len(end["history"])) == (False, 3)


async def test_pages_are_read_over_a_real_stdio_pipe(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    async with open_ledger(db, ttl=None) as ledger:
        await _record(ledger, 250)
        whole = await ledger.session("s").history()
    server = StdioServerParameters(
        command=sys.executable, args=serve_command(db)[1:], cwd=ROOT, env=child_env()
    )
    read: list[Json] = []
    async with Client(server) as client:
        arguments: Json = {"sessionId": "s", "limit": 100}
        while True:
            result = await client.call_tool("thinking_history", arguments)
            assert result.is_error is False, text_of(result)
            assert result.structured_content is not None
            assert json.loads(text_of(result)) == result.structured_content
            read.append(result.structured_content)
            if not result.structured_content["more"]:
                break
            arguments = {"sessionId": "s", "limit": 100, "after": read[-1]["nextCursor"]}
    assert [len(page["history"]) for page in read] == [100, 100, 50]
    assert [item for page in read for item in page["history"]] == whole


async def test_a_session_too_long_for_its_resource_is_a_clear_invalid_params_error(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    async with open_ledger(db, ttl=None) as ledger:
        version = await long_session(raw_store(ledger), "s", WHOLE_READ_MAX)
    server = StdioServerParameters(
        command=sys.executable, args=serve_command(db)[1:], cwd=ROOT, env=child_env()
    )
    async with Client(server) as client:
        with pytest.raises(MCPError) as refused_read:
            await client.read_resource("thoughtledger://sessions/s")
    # Not -32603, "internal error": the request is the one to change.
    assert refused_read.value.error.code == INVALID_PARAMS
    assert refused_read.value.error.message == (
        f"session 's' has {version:,} events: this resource holds a session whole, up to "
        f"{WHOLE_READ_MAX:,}; read it page by page with the thinking_history tool (limit, "
        "after, branch)"
    )
