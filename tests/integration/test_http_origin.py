"""Which web pages may call ``serve --http``: its own origin and ``--allow-origin`` ones only.

A browser names the page behind each request in ``Origin``; any page on another local port
(a dev server, a notebook) must not drive the server through the user's browser. Clients that
are not browsers send no ``Origin`` and are unaffected. A real server in a child process.
"""

from pathlib import Path

import httpx2
import pytest

from tests.support.auth import INITIALIZE, MCP_ACCEPT
from tests.support.processes import WAIT, serving_http, sqlite_in, thoughtledger

pytestmark = pytest.mark.anyio


async def _initialize(http: httpx2.AsyncClient, url: str, origin: str | None) -> int:
    headers = {**MCP_ACCEPT, **({"Origin": origin} if origin is not None else {})}
    return (await http.post(url, json=INITIALIZE, headers=headers)).status_code


async def test_only_the_servers_own_origin_and_allowed_ones_may_call(tmp_path: Path) -> None:
    async with (
        serving_http(
            sqlite_in(tmp_path),
            "--allow-origin",
            "http://localhost:3000",
            "--allow-origin",
            "HTTPS://Dashboard.example/",
        ) as url,
        httpx2.AsyncClient(timeout=WAIT) as http,
    ):
        own = url.removesuffix("/mcp")
        port = int(own.rsplit(":", 1)[1])
        other_port = port + 1 if port < 65535 else port - 1
        answers = {
            origin: await _initialize(http, url, origin)
            for origin in (
                None,
                own,
                "http://localhost:3000",
                "https://dashboard.example",
                f"http://localhost:{other_port}",
                f"http://127.0.0.1:{other_port}",
                "http://localhost:3001",
                "https://evil.example",
                "null",
            )
        }
        refused = await http.post(
            url,
            json=INITIALIZE,
            headers={**MCP_ACCEPT, "Origin": f"http://localhost:{other_port}"},
        )
    assert answers == {
        None: 200,
        own: 200,
        "http://localhost:3000": 200,
        "https://dashboard.example": 200,
        f"http://localhost:{other_port}": 403,
        f"http://127.0.0.1:{other_port}": 403,
        "http://localhost:3001": 403,
        "https://evil.example": 403,
        "null": 403,
    }
    assert "mcp-session-id" not in refused.headers


@pytest.mark.parametrize(
    "value", ["localhost:3000", "http://localhost:3000/app", "ftp://x", "http://*", "http://a:b"]
)
def test_an_allowed_origin_that_is_not_one_is_a_usage_error(tmp_path: Path, value: str) -> None:
    ran = thoughtledger(
        "serve", "--db", sqlite_in(tmp_path), "--http", "--port", "0", "--allow-origin", value
    )
    assert ran.returncode == 2
    assert f"{value!r} is not an origin" in ran.stderr
    assert list(tmp_path.iterdir()) == []


def test_allow_origin_with_stdio_is_a_usage_error(tmp_path: Path) -> None:
    ran = thoughtledger(
        "serve", "--db", sqlite_in(tmp_path), "--allow-origin", "http://localhost:3000"
    )
    assert ran.returncode == 2
    assert ran.stderr == (
        "thoughtledger: error: --allow-origin applies to --http only (stdio has one client: its "
        "parent)\n"
    )
