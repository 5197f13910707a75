"""No secret the operator typed is printed: a ledger URL's password, an OTLP endpoint's.

Each reported leak, in a real process: ``demo`` on a PostgreSQL URL with a password (printed five
times in its suggestions before), a password holding ``?`` or ``:`` (cut in two and echoed by a
port parser before) through ``sessions``, ``ui`` and ``serve``, and ``--otlp http://user:secret@``
in ``export``'s line and error and in ``serve``'s log.
"""

import asyncio
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from tests.support.backends import base_url
from tests.support.lines import LineClient
from tests.support.otlp import otlp_receiver
from tests.support.processes import ROOT, WAIT, child_env, serve_command, sqlite_in, thoughtledger
from thoughtledger import open_ledger

PASSWORD = "Sec?ret:99"  # noqa: S105  # a fake, to find in the output
"""A password holding what a hand-made URL split takes for a query and a port."""
FRAGMENTS = ("Sec?ret", "ret:99", "ret99")

SECRET = "otlp-S3cret-77"  # noqa: S105  # a fake, to find in the output


def assert_unprinted(done: subprocess.CompletedProcess[str], *secrets: str) -> None:
    for secret in secrets:
        assert secret not in done.stdout
        assert secret not in done.stderr


@pytest.fixture
def url_with_password() -> Iterator[str]:
    """A fresh schema of the test database, its URL carrying :data:`PASSWORD` unencoded.

    The test server trusts loopback, so any password logs in: what matters is where it shows.
    """
    base = base_url()
    if sa.make_url(base).password is not None:
        pytest.skip("the test database URL already holds a password")
    schema = f"tl_secret_{uuid.uuid4().hex[:12]}"
    yield re.sub(r"(://[^:@/]+)@", rf"\1:{PASSWORD}@", base, count=1) + f"?schema={schema}"

    async def drop() -> None:
        engine = create_async_engine(base)
        try:
            async with engine.begin() as connection:
                await connection.execute(sa.schema.DropSchema(schema, cascade=True, if_exists=True))
        finally:
            await engine.dispose()

    asyncio.run(drop())


@pytest.mark.postgres
def test_demo_never_prints_the_password_and_its_suggestions_work_from_the_environment(
    url_with_password: str,
) -> None:
    shown = thoughtledger("demo", "--db", url_with_password)
    assert shown.returncode == 0, shown.stderr
    assert_unprinted(shown, PASSWORD, *FRAGMENTS)
    assert "$THOUGHTLEDGER_URL" in shown.stdout
    as_json = thoughtledger("demo", "--db", url_with_password, "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert_unprinted(as_json, PASSWORD, *FRAGMENTS)
    suggested = [line.split()[1:] for line in shown.stdout.splitlines() if "thoughtledger " in line]
    assert len(suggested) == 5
    assert all("--db" not in argv for argv in suggested)
    for argv in suggested:
        again = thoughtledger(*argv, THOUGHTLEDGER_URL=url_with_password)
        assert again.returncode == 0, (argv, again.stderr)
        assert_unprinted(again, PASSWORD, *FRAGMENTS)


@pytest.mark.parametrize("command", ["sessions", "ui", "serve"])
def test_a_password_holding_a_question_mark_or_a_colon_is_read_whole_and_never_echoed(
    command: str,
) -> None:
    # Port 1 on loopback refuses at once: the URL was read, the server could not be reached.
    done = thoughtledger(command, "--db", f"postgresql://tl:{PASSWORD}@127.0.0.1:1/ledger")
    assert done.returncode == 1
    assert done.stderr.startswith("thoughtledger: error: cannot reach postgresql")
    assert "tl:***@127.0.0.1:1/ledger" in done.stderr
    assert "int()" not in done.stderr
    assert_unprinted(done, PASSWORD, *FRAGMENTS, "Sec")


def test_sslmode_is_refused_with_the_asyncpg_spelling(tmp_path: Path) -> None:
    done = thoughtledger("sessions", "--db", "postgresql://tl@127.0.0.1:1/ledger?sslmode=require")
    assert done.returncode == 2
    assert "ssl=require" in done.stderr


def _recorded(db: str) -> None:
    async def record() -> None:
        async with open_ledger(db) as ledger:
            session = await ledger.new_session()
            await session.think(
                thought="t", thought_number=1, total_thoughts=1, next_thought_needed=False
            )

    asyncio.run(record())


def test_export_to_an_endpoint_with_credentials_never_prints_them(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    _recorded(db)
    with otlp_receiver() as (endpoint, received):
        with_secret = endpoint.replace("://", f"://agent:{SECRET}@")
        sent = thoughtledger("export", "--all", "--otlp", with_secret, "--db", db)
        refused = thoughtledger(
            "export", "--all", "--otlp", f"{with_secret}/not-traces", "--db", db
        )
    assert sent.returncode == 0, sent.stderr
    assert "to http://agent:***@127.0.0.1:" in sent.stdout
    assert refused.returncode == 1
    assert "did not accept the spans (HTTP 404)" in refused.stderr
    assert_unprinted(sent, SECRET)
    assert_unprinted(refused, SECRET)
    # The credentials reach the endpoint as what they are for: basic authentication.
    assert received.authorizations[0] == "Basic YWdlbnQ6b3RscC1TM2NyZXQtNzc="


@pytest.mark.anyio
async def test_serves_log_never_prints_the_endpoints_credentials(tmp_path: Path) -> None:
    stderr = tmp_path / "serve.err"
    with otlp_receiver() as (endpoint, _received), stderr.open("wb") as log:
        refusing = endpoint.replace("://", f"://agent:{SECRET}@") + "/not-traces"
        process = await anyio.open_process(
            serve_command(sqlite_in(tmp_path), "--otlp", refusing),
            cwd=ROOT,
            env=child_env(),
            stderr=log,
        )
        try:
            client = LineClient(process, wait=WAIT)
            await client.handshake()
            await client.call_tool(
                "sequentialthinking",
                {
                    "thought": "t",
                    "thoughtNumber": 1,
                    "totalThoughts": 1,
                    "nextThoughtNeeded": False,
                },
            )
            assert process.stdin is not None
            await process.stdin.aclose()  # the client goes away: the server flushes and stops
            with anyio.fail_after(WAIT):
                await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
    logged = stderr.read_text(encoding="utf-8")
    assert "did not accept the spans (HTTP 404)" in logged
    assert "agent:***@" in logged
    assert SECRET not in logged
