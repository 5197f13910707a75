"""``thinking_insights``: an agent reads the figures of its own past runs and searches them.

Real ``thoughtledger serve --tools all`` child processes, driven by the MCP SDK's own client in
both protocol eras, over stdio and over HTTP on loopback, on SQLite and PostgreSQL.
"""

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.auth import serving_with_auth
from tests.support.mcp import Json, Mode, agent_meta, call, refused, thought
from tests.support.processes import ROOT, WAIT, child_env, serve_command, serving_http

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def stdio_client(db: str, mode: Mode, *options: str) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=serve_command(db, "--tools", "all", *options)[1:],
        cwd=ROOT,
        env=child_env(DISABLE_THOUGHT_LOGGING="true"),
    )
    async with Client(server, mode=mode) as client:
        yield client


async def two_runs(client: Client, word: str) -> list[Json]:
    """A finished run of three thoughts (one a revision), then an unfinished run of two."""
    first = [
        await call(client, "sequentialthinking", thought(1, thought=f"the {word} plan")),
        await call(client, "sequentialthinking", thought(2)),
        await call(client, "sequentialthinking", thought(3, isRevision=True, revisesThought=2)),
        await call(client, "sequentialthinking", thought(4, total=4, more=False)),
    ]
    await call(client, "sequentialthinking", thought(1, total=5))
    await call(client, "sequentialthinking", thought(2, total=6, thought="thought 1"))  # a loop
    return first


async def test_an_agent_reads_its_runs_figures_and_finds_its_earlier_thought(
    ledger_url: str, mode: Mode
) -> None:
    async with stdio_client(ledger_url, mode) as client:
        with anyio.fail_after(WAIT):
            first = await two_runs(client, "quokka")
            insights = await call(client, "thinking_insights", {"query": "quokka plan"})
            nothing = await call(client, "thinking_insights", {"query": "wombat"})
    figures = insights["figures"]
    assert "agent" not in insights  # stdio without a name: the ledger is the caller's own
    assert (figures["sessions"], figures["thoughts"]) == (2, 6)
    assert figures["completionRate"] == 0.5
    assert figures["revisionRate"] == round(1 / 6, 4)  # rates as stats rounds them
    assert figures["driftMean"] == pytest.approx(1.0)  # 3 -> 4, and 5 -> 6
    assert (figures["sessionsWithLoops"], figures["repeats"]) == (1, 1)
    [hit] = insights["found"]
    assert hit["sessionId"] == first[0]["sessionId"]
    assert (hit["thoughtNumber"], hit["version"]) == (1, 2)
    start, end = hit["highlights"][0]
    assert hit["snippet"][start:end] == "quokka"
    assert "thought" not in hit  # the snippet only: thinking_history reads the whole
    assert insights["more"] is False
    assert nothing["found"] == []


async def test_a_named_agent_sees_only_its_own_runs(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    async with stdio_client(db, "auto") as client:
        with anyio.fail_after(WAIT):
            await call(client, "sequentialthinking", thought(1, thought="alpha quokka"))
            mine = await client.call_tool(
                "sequentialthinking", thought(1, thought="beta quokka"), meta=agent_meta("beta")
            )
            assert mine.is_error is False
            seen = await client.call_tool(
                "thinking_insights", {"query": "quokka"}, meta=agent_meta("beta")
            )
    answer: Json | None = seen.structured_content
    assert answer is not None
    assert answer["agent"] == "beta"
    assert answer["figures"]["sessions"] == 1
    assert [hit["snippet"] for hit in answer["found"]] == ["beta quokka"]


async def test_each_principal_finds_only_its_own_thoughts_over_http(
    tmp_path: Path, mode: Mode
) -> None:
    async with serving_with_auth(tmp_path, "--tools", "all") as server:
        alice, bob, carol = (
            server.mint("alice"),
            server.mint("bob"),
            server.mint("carol", "auditor"),
        )
        with anyio.fail_after(WAIT):
            async with server.client(alice, mode=mode) as client:
                await call(client, "sequentialthinking", thought(1, thought="alice's quokka"))
                await call(client, "sequentialthinking", thought(2, thought="more quokka"))
            async with server.client(bob, mode=mode) as client:
                await call(client, "sequentialthinking", thought(1, thought="bob's quokka"))
                seen = await call(client, "thinking_insights", {"query": "quokka", "limit": 20})
            async with server.client(carol, mode=mode) as client:
                audited = await call(client, "thinking_insights", {"query": "quokka"})
    assert seen["agent"] == "bob"
    assert seen["figures"]["sessions"] == 1
    assert [hit["snippet"] for hit in seen["found"]] == ["bob's quokka"]
    # An auditor may read every session, but the tool is an agent's look at its own runs.
    assert (audited["figures"]["sessions"], audited["found"]) == (0, [])


async def test_a_query_with_nothing_to_find_is_refused_and_the_server_goes_on(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    async with serving_http(db, "--tools", "all") as url, Client(url) as client:
        with anyio.fail_after(WAIT):
            message = await refused(client, "thinking_insights", {"query": "-only -out"})
            too_many = await refused(client, "thinking_insights", {"limit": 21})
            after = await call(client, "thinking_insights", {})
    assert "word" in message
    assert "limit" in too_many
    assert after["figures"]["sessions"] == 0
    assert "found" not in after


async def test_the_default_tool_list_leaves_it_out(tmp_path: Path) -> None:
    async with serving_http(f"sqlite:///{tmp_path / 'l.db'}") as url, Client(url) as client:
        with anyio.fail_after(WAIT):
            listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == ["sequentialthinking", "thinking_history"]
