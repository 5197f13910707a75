"""Backends the contract suite runs against: memory, SQLite (temp file), PostgreSQL (own schema)."""

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from thoughtledger.ledger.store.base import Clock, LedgerStore, utc_now
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.store.postgres import PostgresEventStore
from thoughtledger.ledger.store.sqlite import SqliteEventStore

CI_PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


def pg_url() -> str | None:
    """The PostgreSQL URL tests use: required in CI, optional elsewhere."""
    url = os.environ.get("THOUGHTLEDGER_TEST_PG_URL")
    if url:
        return url
    return CI_PG_URL if os.environ.get("CI") == "true" else None


def base_url() -> str:
    """The PostgreSQL URL tests use, or skip the test when there is none."""
    url = pg_url()
    if url is None:
        pytest.skip("no PostgreSQL configured (set THOUGHTLEDGER_TEST_PG_URL)")
    return url


def dsn(url: str) -> str:
    """``url`` as asyncpg's own connect() takes it."""
    return sa.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@dataclass
class Backend:
    """Opens stores of one kind on the same underlying storage, as often as a test needs."""

    name: str
    tmp: Path
    schema: str = field(default_factory=lambda: f"tl_test_{uuid.uuid4().hex[:12]}")
    _memory: MemoryEventStore | None = None

    @property
    def durable(self) -> bool:
        return self.name != "memory"

    @property
    def sqlite_path(self) -> Path:
        return self.tmp / "ledger.db"

    @property
    def url(self) -> str | None:
        """The ledger URL the CLI opens this storage with (``None``: memory is in-process only)."""
        if self.name == "memory":
            return None
        if self.name == "sqlite":
            return f"sqlite:///{self.sqlite_path}"
        return f"{pg_url()}?schema={self.schema}"

    async def open(self, *, clock: Clock = utc_now) -> LedgerStore:
        """Open a store on this storage; memory has one store, whose clock is the first given."""
        if self.name == "memory":
            if self._memory is None:
                self._memory = MemoryEventStore(clock=clock)
            return self._memory
        if self.name == "sqlite":
            return await SqliteEventStore.open(self.sqlite_path, clock=clock)
        url = pg_url()
        assert url is not None
        return await PostgresEventStore.open(url, pg_schema=self.schema, pool_size=4, clock=clock)

    async def execute(self, statement: str, **params: object) -> None:
        """Run raw SQL on the backing database (to tamper with it, as an attacker would)."""
        engine = self._engine()
        try:
            async with engine.begin() as connection:
                await connection.execute(sa.text(statement), params)
        finally:
            await engine.dispose()

    async def select(self, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The column names and rows ``query`` reads from the backing database."""
        engine = self._engine()
        try:
            async with engine.connect() as connection:
                result = await connection.execute(sa.text(query))
                return list(result.keys()), [tuple(row) for row in result.all()]
        finally:
            await engine.dispose()

    def _engine(self) -> AsyncEngine:
        """An engine on the backing database, in the ledger's own schema on PostgreSQL."""
        assert self.name != "memory"
        if self.name == "sqlite":
            return create_async_engine(f"sqlite+aiosqlite:///{self.sqlite_path}")
        url = pg_url()
        assert url is not None
        return create_async_engine(
            url, connect_args={"server_settings": {"search_path": self.schema}}
        )

    async def drop(self) -> None:
        if self.name != "postgres":
            return
        url = pg_url()
        assert url is not None
        engine = create_async_engine(url)
        try:
            async with engine.begin() as connection:
                await connection.execute(sa.schema.DropSchema(self.schema, cascade=True))
        finally:
            await engine.dispose()


BACKENDS = [
    pytest.param("memory"),
    pytest.param("sqlite"),
    pytest.param("postgres", marks=pytest.mark.postgres),
]


@asynccontextmanager
async def backend_for(name: str, tmp: Path) -> AsyncIterator[Backend]:
    """Yield a :class:`Backend`, skipping PostgreSQL only where no server is configured."""
    if name == "postgres" and pg_url() is None:
        pytest.skip("no PostgreSQL configured (set THOUGHTLEDGER_TEST_PG_URL)")
    backend = Backend(name, tmp)
    try:
        yield backend
    finally:
        await backend.drop()


async def settled(store: LedgerStore, count: int) -> None:
    """Wait (bounded) until readers see ``count`` events in the log.

    On PostgreSQL a reader sees positions below the oldest transaction in flight anywhere on the
    server (see thoughtledger.ledger.store.postgres), so on a server shared with other work an event
    committed here shows a moment later; the Merkle tree grows over the same prefix.
    """
    import anyio

    with anyio.fail_after(30):
        while len(await store.read_all(limit=count + 1)) < count:  # noqa: ASYNC110  # polls the server
            await anyio.sleep(0.05)
