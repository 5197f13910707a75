"""Fixtures shared by the integration tests: a ledger in a fresh SQLite file, and MCP modes."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from api import Ledger, open_ledger
from tests.integration.test_mcp_tools import Mode


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
