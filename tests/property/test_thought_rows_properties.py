"""For any log, the SQL view tl_thoughts and the Python fold the exports use give the same rows."""

import asyncio
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property.strategies import events
from tests.support.backends import Backend
from tests.support.views import as_dicts, view_rows
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.events import LedgerEvent


async def _both(folder: Path, logs: list[list[LedgerEvent]]) -> tuple[object, object]:
    backend = Backend("sqlite", folder)
    store = await backend.open()
    for index, log in enumerate(logs):
        await store.append(f"s{index}", log, expected_version=0)
    async with Ledger(store) as ledger:
        folded = [row async for _, rows in ledger.transfer.thought_rows(page=2) for row in rows]
    return as_dicts(folded), await view_rows(backend, "tl_thoughts", "position")


@pytest.mark.slow  # a fresh SQLite ledger per example
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(events, min_size=1, max_size=6), min_size=1, max_size=3))
def test_the_view_and_the_fold_agree(logs: list[list[LedgerEvent]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        folded, viewed = asyncio.run(_both(Path(folder), logs))
    assert viewed == folded
