"""Tampering with stored rows, as an attacker with database access would: verify names the spot."""

import random

import pytest

from tests.support.backends import Backend
from tests.support.factories import started, thought
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio

# Each edit is plain SQL against the stored table, bound to session 's' and a target version.
TAMPERS = {
    "edit payload": "UPDATE tl_events SET payload = replace(payload, 'thought', 'thgouht') "
    "WHERE session_id = 's' AND version = :v",
    "edit type": "UPDATE tl_events SET event_type = 'thought.revised' "
    "WHERE session_id = 's' AND version = :v",
    # Another event's hash, in the form the log keeps hashes (binary since schema step 18).
    "edit hash": "UPDATE tl_events SET hash = prev_hash WHERE session_id = 's' AND version = :v",
    "edit event id": "UPDATE tl_events SET event_id = '00000000-0000-7000-8000-000000000000' "
    "WHERE session_id = 's' AND version = :v",
    "delete": "DELETE FROM tl_events WHERE session_id = 's' AND version = :v",
}


async def _ledger_with_rows(backend: Backend) -> LedgerStore:
    store = await backend.open()
    await store.append(
        "s", [started(agent="x"), *(thought(n) for n in range(1, 8))], expected_version=0
    )
    return store


@pytest.mark.parametrize("kind", sorted(TAMPERS))
async def test_every_kind_of_edit_is_detected_at_the_edited_event(
    backend: Backend, kind: str
) -> None:
    if not backend.durable:
        pytest.skip("tampering needs stored rows")
    store = await _ledger_with_rows(backend)
    try:
        version = random.Random(kind).randint(2, 8)  # noqa: S311  # a reproducible target
        await backend.execute(TAMPERS[kind], v=version)
        report = await store.verify("s")
        assert not report.ok
        assert report.first_bad_version == version
        assert report.reason
    finally:
        await store.aclose()


async def test_swapping_two_events_is_detected(backend: Backend) -> None:
    if not backend.durable:
        pytest.skip("tampering needs stored rows")
    store = await _ledger_with_rows(backend)
    try:
        # Swap the contents of versions 3 and 4 (keeping each row's version number).
        for statement in (
            "UPDATE tl_events SET version = -3 WHERE session_id = 's' AND version = 3",
            "UPDATE tl_events SET version = 3 WHERE session_id = 's' AND version = 4",
            "UPDATE tl_events SET version = 4 WHERE session_id = 's' AND version = -3",
        ):
            await backend.execute(statement)
        report = await store.verify("s")
        assert not report.ok
        assert report.first_bad_version == 3
    finally:
        await store.aclose()
