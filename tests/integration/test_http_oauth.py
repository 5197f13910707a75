"""``serve --http --auth-issuer URL``: an OAuth issuer's access tokens, and the RFC 9728 metadata.

A real issuer on loopback (its metadata and key set over HTTP, ``tests/support/issuer.py``), a
real server in a child process, the SDK's streamable-HTTP client and plain HTTP where the
status is the point. Each token's ``sub`` is a principal of its own; a token the issuer did
not sign for this server gets 401 and records nothing; the 401 names the metadata, which names
the issuer.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.auth import AuthServer, bearer, open_session, serving_with_auth
from tests.support.issuer import Issuer, issuing
from tests.support.mcp import call, refused, thought
from tests.support.processes import WAIT, serving_http, sqlite_in, thoughtledger
from thoughtledger.api.bootstrap import open_ledger

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def serving_issuer(
    tmp_path: Path, issuer: Issuer, *options: str
) -> AsyncIterator[AuthServer]:
    """``serve --http --auth-issuer ISSUER`` on an SQLite file in ``tmp_path``."""
    db = sqlite_in(tmp_path)
    async with serving_http(db, "--auth-issuer", issuer.url, *options) as url:
        yield AuthServer(url, tmp_path / "tokens.json", db)


async def _sessions_in(db: str) -> list[str]:
    async with open_ledger(db, read_only=True) as ledger:
        return [head.session_id for head in await ledger.all_heads()]


async def test_issuer_tokens_get_in_and_each_subject_is_a_principal_of_its_own(
    tmp_path: Path,
) -> None:
    with issuing() as issuer:
        async with serving_issuer(tmp_path, issuer) as server:
            alice = issuer.token("alice", server.url)
            bob = issuer.token("bob", server.url)
            carol = issuer.token("carol", server.url, thoughtledger_role="auditor")
            with anyio.fail_after(WAIT):
                async with server.client(alice) as client:
                    mine = await call(client, "sequentialthinking", thought(1))
                session = {"sessionId": mine["sessionId"]}
                async with server.client(bob) as client:
                    theirs = await refused(client, "thinking_history", session)
                async with server.client(carol) as client:
                    audited = await call(client, "thinking_history", session)
                    written = await refused(client, "sequentialthinking", thought(1))
    assert theirs == f"no session '{mine['sessionId']}' in this ledger"  # as if none existed
    assert [t["thought"] for t in audited["history"]] == ["thought 1"]
    assert "auditor" in written
    assert await _sessions_in(server.db) == [mine["sessionId"]]


async def test_tokens_not_signed_by_the_issuer_for_this_server_get_401_and_record_nothing(
    tmp_path: Path,
) -> None:
    with issuing() as issuer:
        async with serving_issuer(tmp_path, issuer) as server:
            good = issuer.claims("alice", server.url)
            key = issuer.keys[issuer.kid]
            tokens = {
                "expired": issuer.sign({**good, "exp": good["iat"] - 120}, key, issuer.kid),
                "wrong audience": issuer.token("alice", server.url.replace("/mcp", "/other")),
                "wrong issuer": issuer.token("alice", server.url, iss="http://127.0.0.1:9"),
                "wrong key": issuer.sign(good, ec.generate_private_key(ec.SECP256R1()), issuer.kid),
                "alg none": issuer.unsigned(good),
                "hmac with the public key": issuer.hmac_with_public_key(good),
            }
            statuses: dict[str, int] = {}
            challenges: set[str] = set()
            async with httpx2.AsyncClient(timeout=WAIT) as http:
                for name, token in tokens.items():
                    answer = await http.post(
                        server.url,
                        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                        headers={
                            **bearer(token),
                            "Accept": "application/json, text/event-stream",
                        },
                    )
                    statuses[name] = answer.status_code
                    challenges.add(answer.headers["www-authenticate"])
            async with server.http(issuer.token("alice", server.url)) as http:
                accepted = await open_session(http, server.url)
    assert statuses == dict.fromkeys(tokens, 401)
    assert accepted.status_code == 200
    base = server.url.removesuffix("/mcp")
    assert challenges == {
        'Bearer error="invalid_token", error_description="Authentication required", '
        f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
    }
    assert await _sessions_in(server.db) == []


async def test_the_protected_resource_metadata_names_the_issuer(tmp_path: Path) -> None:
    with issuing() as issuer:
        async with (
            serving_issuer(tmp_path, issuer) as server,
            httpx2.AsyncClient(timeout=WAIT) as http,
        ):
            base = server.url.removesuffix("/mcp")
            suffixed = await http.get(
                f"{base}/.well-known/oauth-protected-resource/mcp",
                headers={"Origin": "https://client.example"},  # a browser-based MCP client
            )
            bare = await http.get(f"{base}/.well-known/oauth-protected-resource")
    assert suffixed.status_code == bare.status_code == 200
    assert suffixed.json() == bare.json()
    assert suffixed.json() == {
        "resource": server.url,
        "authorization_servers": [issuer.url],
        "bearer_methods_supported": ["header"],
        "scopes_supported": [
            "thoughtledger:reader",
            "thoughtledger:writer",
            "thoughtledger:auditor",
        ],
        "resource_name": "thoughtledger",
    }
    assert suffixed.headers["access-control-allow-origin"] == "*"


async def test_with_the_token_file_alone_the_metadata_names_no_authorization_server(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path) as server, httpx2.AsyncClient(timeout=WAIT) as http:
        base = server.url.removesuffix("/mcp")
        document = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
        challenge = (await open_session(http, server.url)).headers["www-authenticate"]
    assert document["resource"] == server.url
    assert "authorization_servers" not in document  # the server issues none, nobody else does
    assert document["bearer_methods_supported"] == ["header"]
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge


async def test_token_file_tokens_and_issuer_tokens_work_side_by_side(tmp_path: Path) -> None:
    with issuing() as issuer:
        async with serving_with_auth(tmp_path, "--auth-issuer", issuer.url) as server:
            from_file = server.mint("alice")
            from_issuer = issuer.token("bob", server.url)
            async with server.http(from_file) as http:
                first = await open_session(http, server.url)
            async with server.http(from_issuer) as http:
                second = await open_session(http, server.url)
            async with server.http("tl_" + "A" * 43) as http:
                neither = await open_session(http, server.url)
    assert (first.status_code, second.status_code, neither.status_code) == (200, 200, 401)


async def test_an_audience_given_is_the_one_tokens_must_carry(tmp_path: Path) -> None:
    with issuing() as issuer:
        async with serving_issuer(tmp_path, issuer, "--audience", "api://thoughtledger") as server:
            async with server.http(issuer.token("alice", "api://thoughtledger")) as http:
                named = await open_session(http, server.url)
            async with server.http(issuer.token("alice", server.url)) as http:
                url = await open_session(http, server.url)
    assert (named.status_code, url.status_code) == (200, 401)


@pytest.mark.parametrize(
    ("options", "code", "message"),
    [
        (["--audience", "x"], 2, "--audience goes with --auth-issuer URL"),
        (["--role-claim", "roles"], 2, "--role-claim goes with --auth-issuer URL"),
        (["--auth-issuer", "http://auth.example.com"], 2, "must be an https URL"),
        (["--auth-issuer", "http://127.0.0.1:9"], 1, "no metadata for the issuer"),
    ],
)
def test_issuer_options_that_cannot_work_stop_serve_in_one_line(
    tmp_path: Path, options: list[str], code: int, message: str
) -> None:
    db = tmp_path / "l.db"
    ran = thoughtledger("serve", "--db", f"sqlite:///{db}", "--http", "--port", "0", *options)
    assert ran.returncode == code
    assert ran.stderr.startswith("thoughtledger: error: ")
    assert message in ran.stderr
    assert ran.stderr.count("\n") == 1
    assert not db.exists()  # refused before the ledger was opened
