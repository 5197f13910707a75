from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ledger.store.base import EventStore
from tests.backends import BACKENDS, Backend, backend_for


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as chosen:
        yield chosen


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[EventStore]:
    opened = await backend.open()
    try:
        yield opened
    finally:
        await opened.aclose()
