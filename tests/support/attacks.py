"""What an attacker with write access to the database does to hide an edit from the hash chain."""

from tests.support.backends import Backend
from tests.support.forged import hashed_form, redigested
from thoughtledger.ledger.chain import GENESIS_HASH, compute_hash
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.store.base import LedgerStore


async def rewrite_consistently(backend: Backend, store: LedgerStore, session_id: str) -> None:
    """Edit a session's first thought and recompute every hash after it (its head is its last)."""
    prev = GENESIS_HASH
    for record in await store.read_stream(session_id):
        payload = redigested(record.payload.replace("thought 1", "a forged thought"))
        digest = compute_hash(
            prev_hash=prev,
            session_id=session_id,
            version=record.version,
            event_id=str(record.event_id),
            recorded_at=format_time(record.recorded_at),
            event_type=record.event_type,
            schema_version=record.schema_version,
            payload=hashed_form(record.event_type, record.schema_version, payload),
        )
        await backend.execute(
            "UPDATE tl_events SET payload = :payload, prev_hash = :prev, hash = :hash "
            "WHERE position = :position",
            payload=payload,
            prev=bytes.fromhex(prev),  # as the log keeps hashes (schema step 18)
            hash=bytes.fromhex(digest),
            position=record.position,
        )
        prev = digest


async def delete_session(backend: Backend, session_id: str) -> None:
    """Remove a session's events (its head is its last event: nothing else to remove)."""
    await backend.execute("DELETE FROM tl_events WHERE session_id = :s", s=session_id)


async def cut_tail(backend: Backend, store: LedgerStore) -> None:
    """Remove the log's last event (its session's head is then the event before)."""
    last = (await store.read_all(limit=100_000))[-1]
    await backend.execute("DELETE FROM tl_events WHERE position = :p", p=last.position)


async def swap_positions(backend: Backend, store: LedgerStore) -> None:
    """Swap the places in the log of two events of different sessions (each chain unchanged)."""
    log = await store.read_all(limit=100_000)
    first = log[0]
    other = next(r for r in log if r.session_id != first.session_id)
    await backend.execute(
        "UPDATE tl_events SET position = -1 WHERE position = :p", p=first.position
    )
    await backend.execute(
        "UPDATE tl_events SET position = :a WHERE position = :b", a=first.position, b=other.position
    )
    await backend.execute(
        "UPDATE tl_events SET position = :b WHERE position = -1", b=other.position
    )
