"""Fixtures shared by the integration tests: ledgers (an SQLite file; a URL on every durable
backend), MCP modes, and an environment that keeps the user's own ledger out of reach."""

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from tests.support import pg_cluster
from tests.support.backends import pg_url
from tests.support.cli import sqlite_url
from tests.support.mcp import Mode
from thoughtledger import Ledger, open_ledger

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(autouse=True)
def _no_ambient_ledger(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never touch the user's ledger: no URL from the environment, data under tmp."""
    monkeypatch.delenv("THOUGHTLEDGER_URL", raising=False)
    monkeypatch.delenv("THOUGHTLEDGER_READ_URL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[Ledger]:
    """The embedded default: a ledger in ``ledger.db`` under the test's directory."""
    async with open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}") as opened:
        yield opened


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> Mode:
    """Each MCP client mode the SDK offers."""
    chosen: Mode = request.param
    return chosen


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty ledger: a SQLite file, or a fresh PostgreSQL schema (dropped after)."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path / "ledger.db")
        return
    base = pg_url()
    if base is None:
        pytest.skip("no PostgreSQL configured (set THOUGHTLEDGER_TEST_PG_URL)")
    schema = f"tl_cli_{uuid.uuid4().hex[:12]}"
    yield f"{base}?schema={schema}"

    async def drop() -> None:
        engine = create_async_engine(base)
        try:
            async with engine.begin() as connection:
                await connection.execute(sa.schema.DropSchema(schema, cascade=True, if_exists=True))
        finally:
            await engine.dispose()

    asyncio.run(drop())


@pytest.fixture(scope="module")
def browser() -> Iterator["Browser"]:
    """Debian's Chromium, launched once per module of browser tests (skipped without it)."""
    from tests.support.browser import chromium

    with chromium() as launched:
        yield launched


@pytest.fixture
def replicated() -> Iterator[pg_cluster.Pair]:
    """A primary and a hot standby streaming its WAL, private servers removed after the test.

    Skipped without PostgreSQL server binaries, except in CI, where these tests must run.
    """
    try:
        pg_cluster.binaries()
    except pg_cluster.ClusterError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs PostgreSQL server binaries: {exc}", pytrace=False)
        pytest.skip(str(exc))
    pair = pg_cluster.start_pair()
    try:
        yield pair
    finally:
        pg_cluster.stop_pair(pair)
