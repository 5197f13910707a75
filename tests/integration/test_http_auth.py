"""``serve --http --auth FILE``: only the bearer tokens in the token file get in.

A real server in a child process, the SDK's streamable-HTTP client with an ``Authorization``
header, and plain HTTP where the status itself is the point. Without a known token a request is
answered 401 with ``WWW-Authenticate`` and nothing is recorded; a token revoked with the CLI
while its client is connected fails on that client's next request.
"""

import json
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.auth import end_session, open_session, serving_with_auth
from tests.support.mcp import call, thought
from tests.support.processes import WAIT, serving_http, sqlite_in, thoughtledger
from thoughtledger.api.bootstrap import open_ledger

pytestmark = pytest.mark.anyio


async def _sessions_in(db: str) -> list[str]:
    async with open_ledger(db, read_only=True) as ledger:
        return [head.session_id for head in await ledger.all_heads()]


async def test_a_request_without_a_token_is_refused_401_and_records_nothing(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path) as server:
        server.mint("alice")
        async with server.http(None) as http:
            opened = await open_session(http, server.url)
            called = await http.post(
                server.url,
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}},
                headers={"Accept": "application/json, text/event-stream"},
            )
        with anyio.fail_after(WAIT), pytest.raises(BaseExceptionGroup) as failed:
            async with server.client(None) as client:  # the SDK's client cannot even start
                await call(client, "sequentialthinking", thought(1))
    assert failed.group_contains(MCPError)
    for refused in (opened, called):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
        assert "mcp-session-id" not in refused.headers
    assert await _sessions_in(server.db) == []


async def test_an_unknown_token_is_refused_401(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path) as server:
        real = server.mint("alice")
        forged = "tl_" + "A" * 43
        async with server.http(forged) as http:
            guessed = await open_session(http, server.url)
        async with server.http(real[:-1]) as http:
            truncated = await open_session(http, server.url)
        async with server.http(real) as http:
            accepted = await open_session(http, server.url)
    assert (guessed.status_code, truncated.status_code, accepted.status_code) == (401, 401, 200)
    assert "www-authenticate" in guessed.headers
    assert await _sessions_in(server.db) == []  # initialize alone records no thought


async def test_a_known_token_thinks_and_reads_back_its_session(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path) as server:
        token = server.mint("alice")
        with anyio.fail_after(WAIT):
            async with server.client(token) as client:
                first = await call(client, "sequentialthinking", thought(1))
                second = await call(client, "sequentialthinking", thought(2))
                read = await call(client, "thinking_history", {})
    assert first["sessionId"] == second["sessionId"] == read["sessionId"]
    assert [t["thought"] for t in read["history"]] == ["thought 1", "thought 2"]
    assert await _sessions_in(server.db) == [first["sessionId"]]


async def test_a_token_revoked_while_its_client_is_connected_fails_on_the_next_request(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path) as server:
        alice = server.mint("alice")
        bob = server.mint("bob")
        with anyio.fail_after(WAIT):
            async with server.client(alice) as client, server.client(bob) as other:
                before = await call(client, "sequentialthinking", thought(1))
                server.revoke("alice")  # the CLI, in a child process, while connected
                with pytest.raises(MCPError):
                    await call(client, "sequentialthinking", thought(2))
                still = await call(other, "sequentialthinking", thought(1))
        async with server.http(alice) as http:
            afterwards = await open_session(http, server.url)
    assert afterwards.status_code == 401
    assert still["thoughtHistoryLength"] == 1
    async with open_ledger(server.db, read_only=True) as ledger:
        kept = await ledger.state(before["sessionId"])
    assert [t.thought for t in kept.thoughts] == ["thought 1"]  # the refused call wrote nothing


async def test_one_of_several_tokens_can_be_revoked_by_its_id(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path) as server:
        agent = server.mint("alice")
        dashboard = server.mint("alice", "reader")
        listed = thoughtledger("token", "list", "--json", "--file", str(server.token_file))
        ids = {row["role"]: row["id"] for row in json.loads(listed.stdout)}
        server.revoke("alice", ids["reader"])
        async with server.http(agent) as http:
            kept = await open_session(http, server.url)
        async with server.http(dashboard) as http:
            ended = await open_session(http, server.url)
    assert (kept.status_code, ended.status_code) == (200, 401)


async def test_a_principal_at_its_cap_is_refused_while_another_still_connects(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path, "--max-http-sessions", "2") as server:
        alice, bob = server.mint("alice"), server.mint("bob")
        async with server.http(alice) as http:
            held = [await open_session(http, server.url) for _ in range(2)]
            refused = await open_session(http, server.url)
            with anyio.fail_after(WAIT):
                async with server.client(bob) as client:
                    answer = await call(client, "sequentialthinking", thought(1))
            ended = await end_session(http, server.url, held[0].headers["mcp-session-id"])
            reopened = await open_session(http, server.url)
            again = await open_session(http, server.url)
    assert [response.status_code for response in held] == [200, 200]
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert "'alice' already holds 2 open MCP sessions" in error["message"]
    assert "DELETE" in error["message"]
    assert "30 minutes" in error["message"]
    assert "mcp-session-id" not in refused.headers
    assert answer["thoughtHistoryLength"] == 1
    assert ended.status_code == 200
    assert reopened.status_code == 200  # the DELETE freed a slot
    assert again.status_code == 429


async def test_without_auth_every_caller_shares_one_cap(tmp_path: Path) -> None:
    async with (
        serving_http(sqlite_in(tmp_path), "--max-http-sessions", "1") as url,
        httpx2.AsyncClient(timeout=WAIT) as http,
    ):
        first = await open_session(http, url)
        second = await open_session(http, url)
    assert (first.status_code, second.status_code) == (200, 429)
    assert (
        "this server's caller already holds 1 open MCP sessions"
        in second.json()["error"]["message"]
    )


async def test_serving_without_auth_says_at_start_up_that_it_is_single_principal(
    tmp_path: Path,
) -> None:
    log: list[str] = []
    async with serving_http(sqlite_in(tmp_path), log=log):
        pass
    warnings = [line for line in log if "single-principal" in line]
    assert len(warnings) == 1
    assert "any process on this machine can read and write every session" in warnings[0]
    assert "--auth FILE" in warnings[0]
    log.clear()
    async with serving_with_auth(tmp_path, log=log):
        pass
    assert not [line for line in log if "single-principal" in line]


@pytest.mark.parametrize(("option", "value"), [("--auth", "t.json"), ("--max-http-sessions", "4")])
def test_http_options_with_stdio_are_a_usage_error(tmp_path: Path, option: str, value: str) -> None:
    ran = thoughtledger("serve", "--db", sqlite_in(tmp_path), option, value)
    assert ran.returncode == 2
    assert ran.stderr == (
        f"thoughtledger: error: {option} applies to --http only (stdio has one client: its "
        "parent)\n"
    )
    assert ran.stdout == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no token file at "),
        ("not json", " is not a thoughtledger token file: "),
        ('{"version": 9, "tokens": []}', "unknown version 9"),
        ('{"version": 1, "tokens": [{"name": "x"}]}', " is not a thoughtledger token file: "),
    ],
)
def test_a_missing_or_corrupt_token_file_stops_serve_in_one_line(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    tokens = tmp_path / "t.json"
    if content is not None:
        tokens.write_text(content)
    db = tmp_path / "l.db"
    ran = thoughtledger(
        "serve", "--db", f"sqlite:///{db}", "--http", "--port", "0", "--auth", str(tokens)
    )
    assert ran.returncode == 1
    assert ran.stderr.startswith("thoughtledger: error: ")
    assert expected in ran.stderr
    assert ran.stderr.count("\n") == 1
    assert not db.exists()  # refused before the ledger was opened


async def test_an_http_session_answers_only_its_own_principals_tokens(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path) as server:
        alice, dashboard, bob = (
            server.mint("alice"),
            server.mint("alice", "reader"),
            server.mint("bob"),
        )
        async with server.http(alice) as http:
            session = (await open_session(http, server.url)).headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
        headers = {
            "Accept": "application/json, text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
        }
        answers = {}
        for name, token in (("bob", bob), ("dashboard", dashboard), ("alice", alice)):
            async with server.http(token) as http:
                answers[name] = (
                    await http.post(server.url, json=ping, headers=headers)
                ).status_code
    # Another principal's request on it answers as an unknown session; the same principal's
    # other token may use it (its role still comes from the token of each request).
    assert answers == {"bob": 404, "dashboard": 200, "alice": 200}
