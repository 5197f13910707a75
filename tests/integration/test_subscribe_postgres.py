"""PostgreSQL subscriptions: positions that commit out of order, and connections the server cuts."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import pytest

from tests.support.backends import Backend, backend_for, base_url, dsn
from tests.support.factories import thought
from tests.support.subscribing import (
    append_thoughts,
    end_connections,
    eventually,
    listening_connections,
    open_named,
    take,
)
from thoughtledger.ledger.chain import GENESIS_HASH, compute_hash
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.store.base import utc_now

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

PATIENT = 600.0
"""A safety re-read interval no test waits for: what arrives, arrives because it was woken."""


@asynccontextmanager
async def postgres(tmp: Path) -> AsyncIterator[Backend]:
    async with backend_for("postgres", tmp) as backend:
        yield backend


@asynccontextmanager
async def open_transaction(backend: Backend) -> AsyncIterator[asyncpg.Connection]:
    """A transaction of another client that holds a transaction id until the block ends."""
    connection = await asyncpg.connect(
        dsn(base_url()), server_settings={"search_path": backend.schema}
    )
    try:
        await connection.execute("BEGIN")
        await connection.fetchval("SELECT pg_current_xact_id()")
        yield connection
        await connection.execute("ROLLBACK")  # unless the test committed it (then a no-op)
    finally:
        await connection.close()


async def insert_late_event(connection: asyncpg.Connection, session_id: str) -> int:
    """Write an event as an append does, numbered by this open transaction; return its position."""
    payload = thought(1, "late").model_dump_json(exclude={"type", "schema_version"})
    event_id, moment = str(uuid.uuid4()), utc_now()
    digest = compute_hash(
        prev_hash=GENESIS_HASH,
        session_id=session_id,
        version=1,
        event_id=event_id,
        recorded_at=format_time(moment),
        event_type="thought.recorded",
        schema_version=1,
        payload=payload,
    )
    position: int = await connection.fetchval(
        "INSERT INTO tl_events (position, session_id, version, event_id, recorded_at, "
        "schema_version, event_type, payload, prev_hash, hash) "
        "VALUES ((pg_current_xact_id()::text::bigint << 16) + 1, $1, 1, $2::uuid, $3, 1, "
        "'thought.recorded', $4, decode($5, 'hex'), decode($6, 'hex')) RETURNING position",
        session_id,
        event_id,
        moment,
        payload,
        GENESIS_HASH,
        digest,
    )
    return position


async def test_an_event_committed_later_with_a_lower_position_is_delivered_first(
    tmp_path: Path,
) -> None:
    async with postgres(tmp_path) as backend:
        store = await backend.open()
        try:
            events = store.subscribe(poll_interval=PATIENT)
            async with open_transaction(backend) as other:
                late = await insert_late_event(other, "late")
                waiting = asyncio.ensure_future(take(events, 2))
                early = await store.append("early", [thought(1)], expected_version=0)
                assert early[0].position > late
                await asyncio.sleep(0.05)  # the subscriber hears the append, and must not skip
                await other.execute("COMMIT")
            delivered = await waiting
            assert [(r.session_id, r.position) for r in delivered] == [
                ("late", late),
                ("early", early[0].position),
            ]
        finally:
            await store.aclose()


async def test_an_event_held_back_by_a_transaction_that_writes_nothing_is_delivered(
    tmp_path: Path,
) -> None:
    async with postgres(tmp_path) as backend:
        store = await backend.open()
        try:
            events = store.subscribe(poll_interval=PATIENT)
            async with open_transaction(backend):
                waiting = asyncio.ensure_future(take(events, 1))
                await append_thoughts(store, "a", 1)
                await asyncio.sleep(0.05)
            # Rolled back, having written nothing: no notification comes, the subscriber must
            # look again by itself.
            assert [(r.session_id, r.version) for r in await waiting] == [("a", 1)]
        finally:
            await store.aclose()


async def test_a_subscription_survives_the_server_cutting_its_connections(
    tmp_path: Path,
) -> None:
    async with postgres(tmp_path) as backend:
        name = f"tl_cut_{uuid.uuid4().hex[:10]}"
        store = await open_named(backend, name)
        writer = await backend.open()
        try:
            await append_thoughts(writer, "a", 2)
            events = store.subscribe(poll_interval=PATIENT)
            assert len(await take(events, 2)) == 2
            assert await listening_connections(name) == 1
            await end_connections(name)
            waiting = asyncio.ensure_future(take(events, 3))
            await append_thoughts(writer, "a", 3, start=2)
            assert [r.version for r in await waiting] == [3, 4, 5]

            async def listening_again() -> bool:
                return await listening_connections(name) == 1

            await eventually(listening_again)
            # And it is woken by notifications again, not only by re-reads.
            waiting = asyncio.ensure_future(take(events, 1))
            await append_thoughts(writer, "a", 1, start=5)
            assert [r.version for r in await waiting] == [6]
        finally:
            await store.aclose()
            await writer.aclose()


async def test_a_store_that_appends_and_closes_at_once_still_wakes_subscribers(
    tmp_path: Path,
) -> None:
    async with postgres(tmp_path) as backend:
        store = await backend.open()
        try:
            events = store.subscribe(poll_interval=PATIENT)
            waiting = asyncio.ensure_future(take(events, 1))
            passing = await backend.open()
            await append_thoughts(passing, "brief", 1)
            await passing.aclose()
            assert [r.session_id for r in await waiting] == ["brief"]
        finally:
            await store.aclose()


async def test_an_event_whose_notification_never_comes_is_read_at_the_next_re_read(
    tmp_path: Path,
) -> None:
    async with postgres(tmp_path) as backend:
        store = await backend.open()
        try:
            events = store.subscribe(poll_interval=0.2)
            waiting = asyncio.ensure_future(take(events, 1))
            # Written by another client that sends no NOTIFY (an older thoughtledger, a restore):
            # the notification is only a hint, the periodic re-read finds the event.
            async with open_transaction(backend) as other:
                position = await insert_late_event(other, "silent")
                await other.execute("COMMIT")
            assert [(r.session_id, r.position) for r in await waiting] == [("silent", position)]
        finally:
            await store.aclose()
