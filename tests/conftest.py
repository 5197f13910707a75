from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import structlog

from tests.support.backends import BACKENDS, Backend, backend_for
from thoughtledger.ledger.store.base import LedgerStore


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _structlog_as_it_was() -> Iterator[None]:
    """Entry points (CLI, MCP serve) configure structlog for the process, bound to the stderr of
    the moment; under pytest that stream is closed after the test, so undo the configuration."""
    yield
    structlog.reset_defaults()


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as chosen:
        yield chosen


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[LedgerStore]:
    opened = await backend.open()
    try:
        yield opened
    finally:
        await opened.aclose()


@pytest.fixture(scope="session", autouse=True)
def _postgres_reachable_in_ci() -> None:
    """In CI the PostgreSQL tests must run: fail the whole run loudly when the server is missing."""
    import asyncio
    import os

    import asyncpg

    from tests.support.backends import pg_url

    url = pg_url()
    if os.environ.get("CI") != "true" or url is None:
        return

    async def probe() -> None:
        dsn = url.replace("postgresql+asyncpg://", "postgresql://", 1)
        connection = await asyncio.wait_for(asyncpg.connect(dsn), timeout=10)
        await connection.close()

    try:
        asyncio.run(probe())
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        pytest.fail(f"CI needs PostgreSQL at {url}, and it cannot be used: {exc}", pytrace=False)
