import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import structlog

from tests.support import pg_cluster
from tests.support.backends import BACKENDS, Backend, backend_for, pg_url
from thoughtledger.ledger.store.base import LedgerStore

_CLUSTER = pytest.StashKey[pg_cluster.Cluster]()


def pytest_configure(config: pytest.Config) -> None:
    """A test worker running beside others (``pytest -n N``) gets a PostgreSQL server of its own.

    Workers sharing one server would hold back each other's reads of the whole log (see
    :mod:`tests.support.pg_cluster`). The worker's URL replaces ``THOUGHTLEDGER_TEST_PG_URL`` in
    its environment, so the processes its tests start use it too.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ or pg_url() is None:
        return
    cluster = pg_cluster.start()
    config.stash[_CLUSTER] = cluster
    os.environ["THOUGHTLEDGER_TEST_PG_URL"] = cluster.url
    # The worker's server has no TLS, so asking for it (asyncpg's default, sslmode=prefer) only
    # adds a round trip per connection; and when a cancelled query's cancel request meets a
    # negotiation cut short, asyncpg leaks a stray ConnectionError("unexpected connection_lost()
    # call") to the event loop (MagicStack/asyncpg#1310), which fails whichever test is running.
    os.environ.setdefault("PGSSLMODE", "disable")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the worker's own PostgreSQL server, if it started one."""
    cluster = config.stash.get(_CLUSTER, None)
    if cluster is not None:
        pg_cluster.stop(cluster)


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
