"""``serve --read-url``: the MCP server reads on a hot standby and writes to the primary.

Real ``thoughtledger serve --tools all`` child processes on a private primary and its hot
standby, driven by the MCP SDK's own client over stdio and over HTTP. Each thought is read back
at once (the server reads its own writes), and the servers' statement logs show where each
call went: the reads to the standby, the appends to the primary.
"""

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support import pg_cluster
from tests.support.mcp import Json, call, resource_text, thought
from tests.support.processes import (
    ROOT,
    WAIT,
    child_env,
    serve_command,
    serving_http,
    thoughtledger,
)
from thoughtledger import open_ledger

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # each test starts a primary and a standby

APP = "mcp"
"""The ``application_name`` of the server's connections, by which the statement logs name them."""

THOUGHTS = 5


def named(cluster: pg_cluster.Cluster) -> str:
    """The cluster's URL with its connections named :data:`APP` in its log."""
    return f"{cluster.url}?application_name={APP}"


async def created(pair: pg_cluster.Pair) -> None:
    """The ledger's tables on the primary, replayed on the standby."""
    async with open_ledger(pair.primary.url):
        pass
    await anyio.to_thread.run_sync(pg_cluster.wait_replayed, pair)


@asynccontextmanager
async def stdio_client(pair: pg_cluster.Pair, *options: str, **env: str) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=serve_command(named(pair.primary), "--tools", "all", *options)[1:],
        cwd=ROOT,
        env=child_env(DISABLE_THOUGHT_LOGGING="true", **env),
    )
    async with Client(server) as client:
        yield client


async def think_and_read_back(client: Client) -> str:
    """Thoughts, each read back at once through every way of reading; the session's id."""
    session_id: str | None = None
    for number in range(1, THOUGHTS + 1):
        named_session: Json = {} if session_id is None else {"sessionId": session_id}
        text = f"quokka {number}" if number == 1 else f"thought {number}"
        answer = await call(
            client, "sequentialthinking", thought(number, THOUGHTS, thought=text, **named_session)
        )
        session_id = answer["sessionId"]
        read: Json = await call(client, "thinking_history", {"sessionId": session_id})
        assert len(read["history"]) == number  # the thought just recorded is there
    assert session_id is not None
    document = await resource_text(client, f"thoughtledger://sessions/{session_id}")
    assert len(document["thoughts"]) == THOUGHTS
    insights = await call(client, "thinking_insights", {"query": "quokka"})
    assert insights["figures"]["thoughts"] == THOUGHTS
    assert [hit["sessionId"] for hit in insights["found"]] == [session_id]
    return session_id


def reads(cluster: pg_cluster.Cluster) -> list[str]:
    """The reads of the ledger's tables the server's connections ran on ``cluster``."""
    statements = pg_cluster.statements(cluster, APP)
    return [
        line for line in statements if "SELECT" in line and "tl_" in line and "INSERT" not in line
    ]


def catching_up(line: str) -> bool:
    """Whether a statement is the search index's catch-up: it writes what it reads, so it runs
    on the primary (each of its statements names the index's position, and no query)."""
    return "tl_search_through" in line and "to_tsquery" not in line


def heads_for_append(line: str) -> bool:
    """Whether a statement is the read of a session's head an append decides on: the session's
    last event (since schema step 19 the head is read from the log), on the primary it writes to."""
    return "ORDER BY tl_events.version DESC LIMIT 1" in line


def assert_reads_on_the_standby(pair: pg_cluster.Pair) -> None:
    # Each history, resource and insights call read the log and the search index there.
    on_standby = reads(pair.standby)
    assert len(on_standby) >= 2 * THOUGHTS + 2
    assert any("FROM tl_events" in line for line in on_standby)
    assert any("to_tsquery" in line for line in on_standby)  # the search
    written = pg_cluster.statements(pair.primary, APP)
    assert len([line for line in written if "INSERT INTO tl_events" in line]) == THOUGHTS
    # The primary read only what the appends read for themselves (the schema, a session's head).
    assert not [
        line
        for line in reads(pair.primary)
        if ("tl_events" in line or "to_tsquery" in line)
        and not catching_up(line)
        and not heads_for_append(line)
    ]


async def test_over_stdio_each_thought_is_read_back_at_once_from_the_standby(
    replicated: pg_cluster.Pair,
) -> None:
    await created(replicated)
    async with stdio_client(replicated, "--read-url", named(replicated.standby)) as client:
        with anyio.fail_after(WAIT):
            await think_and_read_back(client)
    assert_reads_on_the_standby(replicated)


async def test_over_http_each_thought_is_read_back_at_once_from_the_standby(
    replicated: pg_cluster.Pair,
) -> None:
    await created(replicated)
    options = ("--tools", "all", "--read-url", named(replicated.standby))
    async with serving_http(named(replicated.primary), *options) as url, Client(url) as client:
        with anyio.fail_after(WAIT):
            await think_and_read_back(client)
    assert_reads_on_the_standby(replicated)


async def test_the_read_url_may_come_from_the_environment(replicated: pg_cluster.Pair) -> None:
    await created(replicated)
    standby = named(replicated.standby)
    async with stdio_client(replicated, THOUGHTLEDGER_READ_URL=standby) as client:
        with anyio.fail_after(WAIT):
            await think_and_read_back(client)
    assert_reads_on_the_standby(replicated)


@pytest.mark.parametrize("transport", [(), ("--http", "--port", "0")], ids=["stdio", "http"])
def test_a_read_url_for_a_ledger_not_on_postgresql_is_a_usage_error(
    tmp_path: Path, transport: tuple[str, ...]
) -> None:
    ledger = tmp_path / "l.db"
    ran = thoughtledger(
        "serve",
        "--db",
        f"sqlite:///{ledger}",
        "--read-url",
        "postgresql://u:secret@127.0.0.1:1/x",
        *transport,
    )
    assert ran.returncode == 2, ran.stderr
    [line] = [line for line in ran.stderr.splitlines() if "error" in line]
    assert line.startswith("thoughtledger: error: ")
    assert "needs a PostgreSQL ledger" in line
    assert "secret" not in ran.stderr
    assert not ledger.exists()


def test_a_standby_that_cannot_be_reached_is_one_line_without_its_password(
    replicated: pg_cluster.Pair,
) -> None:
    pg_cluster.halt(replicated.standby)
    standby = f"postgresql://postgres:hunter2@127.0.0.1:{replicated.standby.port}/test"
    ran = thoughtledger("serve", "--db", replicated.primary.url, "--read-url", standby)
    assert ran.returncode == 1, ran.stderr
    [line] = [line for line in ran.stderr.splitlines() if "error" in line]
    assert line.startswith("thoughtledger: error: ")
    assert f"127.0.0.1:{replicated.standby.port}" in line
    assert "hunter2" not in ran.stderr
