"""The token file others must not touch, and the streams a revoked token must not keep.

``serve --http --auth FILE`` refuses a token file, or a folder above it, that another user
could write (they could add an auditor's token), at start and whenever it reads the file again;
an SSE stream a client opened with a token ends within seconds of ``token revoke``. A real
server in a child process, real HTTP.
"""

import time
from pathlib import Path

import anyio
import anyio.to_thread
import httpx2
import pytest

from tests.support.auth import MCP_ACCEPT, AuthServer, bearer, open_session, serving_with_auth
from tests.support.processes import WAIT, sqlite_in, thoughtledger
from thoughtledger.adapters.auth.tokens import TokenFile, save_tokens

pytestmark = pytest.mark.anyio


def _serve(tokens: Path, db: Path) -> tuple[int, str]:
    ran = thoughtledger(
        "serve", "--db", f"sqlite:///{db}", "--http", "--port", "0", "--auth", str(tokens)
    )
    return ran.returncode, ran.stderr


def test_a_token_file_others_can_write_stops_serve_in_one_line(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    save_tokens(tokens, TokenFile())
    tokens.chmod(0o666)
    code, err = _serve(tokens, tmp_path / "l.db")
    assert code == 1
    assert err == (
        f"thoughtledger: error: the token file {tokens} is writable by its group and other "
        f"users (mode 0666), so they could add tokens: refused (fix it: chmod go-w {tokens})\n"
    )
    assert not (tmp_path / "l.db").exists()


@pytest.mark.parametrize(
    ("mode", "who"), [(0o777, "its group and other users"), (0o770, "its group")]
)
def test_a_token_file_in_a_folder_others_can_write_is_refused(
    tmp_path: Path, mode: int, who: str
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    tokens = shared / "tokens.json"
    save_tokens(tokens, TokenFile())
    shared.chmod(mode)
    code, err = _serve(tokens, tmp_path / "l.db")
    assert code == 1
    assert f"the folder {shared} is writable by {who} (mode 0{mode:o})" in err
    assert err.count("\n") == 1


async def test_a_private_token_file_in_a_sticky_shared_folder_is_accepted(
    tmp_path: Path,
) -> None:
    # Like /tmp: others may add files there, but not rename or replace this one.
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    async with serving_with_auth(sticky) as server, server.http(server.mint("alice")) as http:
        opened = await open_session(http, server.url)
    assert opened.status_code == 200


async def test_a_token_file_made_writable_while_serving_refuses_every_token_until_fixed(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path) as server:
        alice = server.mint("alice")
        async with server.http(alice) as http:
            before = await open_session(http, server.url)
            server.token_file.chmod(0o666)
            exposed = await open_session(http, server.url)
            server.token_file.chmod(0o600)
            fixed = await open_session(http, server.url)
    assert (before.status_code, exposed.status_code, fixed.status_code) == (200, 401, 200)


async def test_a_folder_made_writable_while_serving_refuses_every_token_until_fixed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    async with serving_with_auth(folder, db=sqlite_in(tmp_path)) as server:
        alice = server.mint("alice")
        async with server.http(alice) as http:
            before = await open_session(http, server.url)
            folder.chmod(0o777)  # anyone may now swap the file for one of their own
            exposed = await open_session(http, server.url)
            folder.chmod(0o700)  # fixed as the log line says: the file itself is unchanged
            fixed = await open_session(http, server.url)
    assert (before.status_code, exposed.status_code, fixed.status_code) == (200, 401, 200)


async def _open_stream(http: httpx2.AsyncClient, server: AuthServer) -> tuple[str, dict[str, str]]:
    opened = await open_session(http, server.url)
    assert opened.status_code == 200
    headers = {
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    initialized = await http.post(
        server.url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={**MCP_ACCEPT, **headers},
    )
    assert initialized.status_code == 202
    return opened.headers["mcp-session-id"], headers


async def test_an_open_sse_stream_ends_within_seconds_of_its_tokens_revocation(
    tmp_path: Path,
) -> None:
    async with serving_with_auth(tmp_path) as server:
        alice, bob = server.mint("alice"), server.mint("bob")
        ended: dict[str, float] = {}
        alice_ended = anyio.Event()

        async def listen(name: str, token: str, opened: anyio.Event) -> None:
            async with httpx2.AsyncClient(headers=bearer(token), timeout=None) as http:
                _, headers = await _open_stream(http, server)
                async with http.stream(
                    "GET", server.url, headers={"Accept": "text/event-stream", **headers}
                ) as stream:
                    assert stream.status_code == 200
                    opened.set()
                    async for _ in stream.aiter_bytes():
                        pass  # the server sends nothing unasked: this waits for the end
            ended[name] = time.monotonic()
            if name == "alice":
                alice_ended.set()

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                alice_open, bob_open = anyio.Event(), anyio.Event()
                group.start_soon(listen, "alice", alice, alice_open)
                group.start_soon(listen, "bob", bob, bob_open)
                await alice_open.wait()
                await bob_open.wait()
                await anyio.to_thread.run_sync(server.revoke, "alice")
                revoked_at = time.monotonic()
                await alice_ended.wait()
                bob_still_open = "bob" not in ended
                group.cancel_scope.cancel()
    assert bob_still_open  # only the revoked token's stream ended
    assert ended["alice"] - revoked_at < 10  # checked every second; generous on a busy machine
