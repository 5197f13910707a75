"""The command line's listing and statistics agree on the agent an MCP call named.

Sessions are started over MCP (in this process, into an SQLite file) and read back by ``sessions``
and ``stats``: their ``--agent`` filters find the same sessions, the agent column never shows the
client software, and ``serve --agent`` refuses a name no view could show.
"""

import asyncio
from pathlib import Path

import pytest
from mcp import Client

from tests.support.cli import cli, sqlite_url
from tests.support.mcp import agent_meta, thought
from thoughtledger.adapters.mcp import create_server
from thoughtledger.api import open_ledger


async def _record(url: str) -> None:
    async with open_ledger(url) as ledger:
        for name in ("planner", "planner", None):
            async with Client(create_server(ledger)) as client:
                meta = None if name is None else agent_meta(name)
                result = await client.call_tool(
                    "sequentialthinking", thought(1, total=1, more=False), meta=meta
                )
                assert result.is_error is False


def test_sessions_and_stats_filter_and_show_the_same_agent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(_record(url))
    listed = cli(capsys, "sessions", "--agent", "planner", "--json", "--db", url).json()
    assert [item["agent"] for item in listed] == ["planner", "planner"]
    clients = {item["client"] for item in listed}
    figures = cli(capsys, "stats", "--agent", "planner", "--json", "--db", url).json()
    assert figures["overall"]["sessions"] == 2
    assert [(g["agent"], g["sessions"]) for g in figures["byAgent"]] == [("planner", 2)]
    # A client is not an agent: filtering by the client's name finds no agent's session.
    (client,) = clients
    assert cli(capsys, "sessions", "--agent", client, "--json", "--db", url).json() == []
    table = cli(capsys, "sessions", "--db", url)
    assert table.code == 0, table.err
    rows = [line for line in table.out.splitlines() if client.split()[0] in line]
    assert len(rows) == 3  # the client column names the client of every session
    assert sum("planner" in row for row in rows) == 2
    everyone = cli(capsys, "stats", "--json", "--db", url).json()
    assert sorted((g["agent"] or "-", g["sessions"]) for g in everyone["byAgent"]) == [
        ("-", 1),
        ("planner", 2),
    ]


@pytest.mark.parametrize("name", ["", "x" * 101, "bell\a"])
def test_serve_refuses_an_agent_name_no_view_could_show(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    ran = cli(capsys, "serve", "--agent", name, "--db", sqlite_url(tmp_path / "l.db"))
    assert ran.code == 2
    assert "argument --agent: an agent's name" in ran.err
    assert ran.err.count("\n") == 1
    assert not (tmp_path / "l.db").exists()
