import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.backends import Backend, pg_url


@dataclass
class Target:
    """A durable ledger that child processes can open by URL."""

    url: str
    backend: Backend


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def target(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Target]:
    backend = Backend(request.param, tmp_path)
    if request.param == "sqlite":
        yield Target(f"sqlite:///{backend.sqlite_path}", backend)
        return
    url = pg_url()
    if url is None:
        pytest.skip("no PostgreSQL configured (set THOUGHTLEDGER_TEST_PG_URL)")
    backend.schema = f"tl_test_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in url else "?"
    try:
        yield Target(f"{url}{sep}schema={backend.schema}", backend)
    finally:
        await backend.drop()
