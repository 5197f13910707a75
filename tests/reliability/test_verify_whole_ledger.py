"""A whole-ledger verify walks the log once and says of each session what its own walk says."""

import pytest

from tests.support.backends import Backend
from tests.support.factories import started, thought
from thoughtledger.api import Ledger
from thoughtledger.ledger.chain import VerifyReport
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio

SESSIONS = ("a", "s", "b")

# Each edit is plain SQL against the stored table, bound to session 's' and version 4.
TAMPERS = {
    "edit payload": "UPDATE tl_events SET payload = replace(payload, 'thought', 'thgouht') "
    "WHERE session_id = 's' AND version = 4",
    # Another event's hash, in the form the log keeps hashes (binary since schema step 18).
    "edit hash": "UPDATE tl_events SET hash = prev_hash WHERE session_id = 's' AND version = 4",
    "delete": "DELETE FROM tl_events WHERE session_id = 's' AND version = 4",
    "move to another session": "UPDATE tl_events SET session_id = 'b', version = 99 "
    "WHERE session_id = 's' AND version = 4",
}


async def _interleaved(backend: Backend) -> LedgerStore:
    """Three sessions whose events alternate in the log (so one walk sees them mixed)."""
    store = await backend.open()
    for session_id in SESSIONS:
        await store.append(session_id, [started(agent="x")], expected_version=0)
    for number in range(1, 8):
        for session_id in SESSIONS:
            await store.append(session_id, [thought(number)], expected_version=number)
    return store


async def _each_alone(ledger: Ledger) -> list[VerifyReport]:
    return [await ledger.verify(head.session_id) for head in await ledger.all_heads()]


def _by_session(reports: list[VerifyReport]) -> dict[str, VerifyReport]:
    return {report.session_id: report for report in reports}


async def test_an_untouched_ledger_verifies_whole_with_every_event_counted(
    backend: Backend,
) -> None:
    store = await _interleaved(backend)
    try:
        reports = await Ledger(store).verify_all()
        assert {r.session_id: (r.ok, r.checked) for r in reports} == {
            session_id: (True, 8) for session_id in SESSIONS
        }
    finally:
        await store.aclose()


@pytest.mark.parametrize("kind", sorted(TAMPERS))
async def test_each_edit_is_reported_by_the_whole_walk_as_by_the_session_s_own(
    backend: Backend, kind: str
) -> None:
    if not backend.durable:
        pytest.skip("tampering needs stored rows")
    store = await _interleaved(backend)
    try:
        await backend.execute(TAMPERS[kind])
        ledger = Ledger(store)
        whole = _by_session(await ledger.verify_all())
        alone = _by_session(await _each_alone(ledger))
        assert not whole["s"].ok
        assert whole["a"].ok
        assert {s for s, r in whole.items() if not r.ok} == {
            s for s, r in alone.items() if not r.ok
        }
        if kind != "move to another session":
            assert whole == alone
        # A row planted in another session is met where the log holds it (before that
        # session's own version 4), not after its last version: the place named differs.
    finally:
        await store.aclose()


async def test_a_cut_tail_is_a_shorter_chain_to_the_whole_walk_as_to_the_session_s_own(
    backend: Backend,
) -> None:
    # A session's head is its last event: only a checkpoint tells a cut tail (see
    # docs/verification.md), and both walks agree on what is left.
    if not backend.durable:
        pytest.skip("tampering needs stored rows")
    store = await _interleaved(backend)
    try:
        await backend.execute("DELETE FROM tl_events WHERE session_id = 's' AND version > 6")
        ledger = Ledger(store)
        whole = _by_session(await ledger.verify_all())
        alone = _by_session(await _each_alone(ledger))
        assert whole == alone
        assert (whole["s"].ok, whole["s"].checked) == (True, 6)
    finally:
        await store.aclose()


async def test_a_fork_whose_source_was_rewritten_fails_in_the_whole_walk(
    backend: Backend,
) -> None:
    if not backend.durable:
        pytest.skip("tampering needs stored rows")
    store = await _interleaved(backend)
    try:
        ledger = Ledger(store)
        fork = await ledger.fork("a", at_version=3)
        await fork.think(thought="x", thought_number=4, total_thoughts=4, next_thought_needed=False)
        # Dropping the source's events from the fork point on breaks the source's chain (its
        # head) and the fork's link (no event there with the hash the fork names).
        await backend.execute("DELETE FROM tl_events WHERE session_id = 'a' AND version >= 3")
        whole = _by_session(await ledger.verify_all())
        assert not whole[fork.id].ok
        assert whole == _by_session(await _each_alone(ledger))
    finally:
        await store.aclose()


async def test_progress_reaches_every_event_of_the_ledger(backend: Backend) -> None:
    store = await _interleaved(backend)
    try:
        seen: list[tuple[int, int]] = []
        await Ledger(store).verify_all(progress=lambda done, total: seen.append((done, total)))
        done, total = seen[-1]
        assert total == 24
        # On PostgreSQL a read of the whole log may stop short of a transaction in flight
        # elsewhere on the server (those sessions are then walked alone, not counted here).
        assert done == 24 or backend.name == "postgres"
    finally:
        await store.aclose()
