"""``serve --http --auth FILE`` in a subprocess, tokens for it, and MCP clients that carry one.

Usage::

    async with serving_with_auth(tmp_path) as server:
        alice = server.mint("alice")                    # a writer token
        async with server.client(alice) as client:      # the SDK's client, Authorization set
            await call(client, "sequentialthinking", thought(1))
        server.revoke("alice")                          # the CLI, in a child process
"""

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.mcp import Mode
from tests.support.processes import serving_http, sqlite_in, thoughtledger
from thoughtledger.adapters.auth.tokens import TokenFile, load_tokens_or_empty, save_tokens
from thoughtledger.api.access import Role

TIMEOUT = httpx2.Timeout(20.0)


def bearer(token: str | None) -> dict[str, str]:
    """The ``Authorization`` header for ``token`` (none for ``None``)."""
    return {} if token is None else {"Authorization": f"Bearer {token}"}


@dataclass(frozen=True)
class AuthServer:
    """A running ``serve --http --auth FILE``.

    Attributes:
        url: The MCP endpoint (``http://127.0.0.1:PORT/mcp``).
        token_file: The token file it reads (on every request, when it changed).
        db: The ledger URL it serves.
    """

    url: str
    token_file: Path
    db: str

    def mint(self, name: str, role: Role = "writer") -> str:
        """A new token for ``name``; the server accepts it from its next request on."""
        tokens, token, _ = load_tokens_or_empty(self.token_file).add(
            name, role, now=datetime.now(UTC)
        )
        save_tokens(self.token_file, tokens)
        return token

    def revoke(self, name: str, token_id: str | None = None) -> subprocess.CompletedProcess[str]:
        """``thoughtledger token revoke NAME [--id ID]`` in a child process (checked: exit 0)."""
        extra = ["--id", token_id] if token_id else []
        ran = thoughtledger("token", "revoke", name, *extra, "--file", str(self.token_file))
        assert ran.returncode == 0, ran.stderr
        return ran

    @asynccontextmanager
    async def client(self, token: str | None, *, mode: Mode = "legacy") -> AsyncIterator[Client]:
        """The SDK's streamable-HTTP client, sending ``token`` as a bearer token."""
        async with (
            httpx2.AsyncClient(headers=bearer(token), timeout=TIMEOUT) as http,
            Client(streamable_http_client(self.url, http_client=http), mode=mode) as client,
        ):
            yield client

    @asynccontextmanager
    async def http(self, token: str | None) -> AsyncIterator[httpx2.AsyncClient]:
        """A plain HTTP client for the endpoint, sending ``token`` (for raw status checks)."""
        async with httpx2.AsyncClient(headers=bearer(token), timeout=TIMEOUT) as http:
            yield http


@asynccontextmanager
async def serving_with_auth(
    folder: Path,
    *options: str,
    db: str | None = None,
    log: list[str] | None = None,
    rest: list[str] | None = None,
) -> AsyncIterator[AuthServer]:
    """Start ``serve --http --auth FOLDER/tokens.json`` (an empty token file is made first).

    Args:
        folder: Where the token file (and, by default, the ledger ``l.db``) lives.
        options: More ``serve`` options (``--max-http-sessions 2``...).
        db: The ledger URL; default an SQLite file in ``folder``.
        log: Receives the server's log lines up to the one with its URL.
        rest: Receives the text the server logs after that line, as it comes.
    """
    token_file = folder / "tokens.json"
    if not token_file.exists():
        save_tokens(token_file, TokenFile())
    ledger = db or sqlite_in(folder)
    async with serving_http(ledger, "--auth", str(token_file), *options, log=log, rest=rest) as url:
        yield AuthServer(url, token_file, ledger)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "1"},
    },
}
"""An ``initialize`` request, as a handshake-era client opens an HTTP session with it."""
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


async def open_session(http: httpx2.AsyncClient, url: str) -> httpx2.Response:
    """POST ``initialize`` (opening a session when it succeeds); the whole response read."""
    return await http.post(url, json=INITIALIZE, headers=MCP_ACCEPT)


async def end_session(http: httpx2.AsyncClient, url: str, session_id: str) -> httpx2.Response:
    """DELETE the session, as a client ends it."""
    return await http.delete(url, headers={**MCP_ACCEPT, "mcp-session-id": session_id})
