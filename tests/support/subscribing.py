"""Helpers for subscription tests: bounded collection, appenders in-process and out of process."""

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import asyncpg

from tests.support.backends import Backend, dsn, pg_url
from tests.support.factories import thought
from tests.support.processes import ROOT, child_env
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.store.base import LedgerStore
from thoughtledger.ledger.store.postgres import PostgresEventStore

WAIT = 20.0
"""Seconds any one wait for an event may take before the test fails (a hang fails fast)."""


async def take(events: AsyncIterator[RecordedEvent], count: int) -> list[RecordedEvent]:
    """The next ``count`` events of a subscription (failing after :data:`WAIT` seconds)."""
    taken: list[RecordedEvent] = []

    async def run() -> None:
        async for record in events:
            taken.append(record)
            if len(taken) == count:
                return

    if count:
        await asyncio.wait_for(run(), WAIT)
    return taken


async def take_through(events: AsyncIterator[RecordedEvent], position: int) -> list[RecordedEvent]:
    """Events of a subscription up to and including ``position`` (failing after :data:`WAIT`)."""
    taken: list[RecordedEvent] = []

    async def run() -> None:
        async for record in events:
            taken.append(record)
            if record.position >= position:
                return

    await asyncio.wait_for(run(), WAIT)
    return taken


async def whole_log(store: LedgerStore, *, after: int = 0) -> list[RecordedEvent]:
    """Every event after ``after``, paged through :meth:`LedgerStore.read_all`."""
    found: list[RecordedEvent] = []
    while page := await store.read_all(after_position=after, limit=1000):
        found += page
        after = page[-1].position
    return found


async def stored(store: LedgerStore, *session_ids: str) -> list[RecordedEvent]:
    """Every event of these sessions, in position order, as soon as each append has returned.

    (On PostgreSQL :func:`whole_log` may lag: it waits for every older transaction of the server
    to end, other tests' included, to be sure no lower position can still commit.)
    """
    found = [record for name in session_ids for record in await store.read_stream(name)]
    return sorted(found, key=lambda record: record.position)


async def append_thoughts(
    store: LedgerStore, session_id: str, count: int, *, start: int = 0
) -> int:
    """Append ``count`` thoughts to ``session_id``, one append each, from version ``start``."""
    for version in range(start, start + count):
        await store.append(session_id, [thought(version + 1)], expected_version=version)
        await asyncio.sleep(0)  # let subscribers run between appends: interleave, not burst
    return start + count


@contextlib.contextmanager
def appending_process(url: str, session_id: str, count: int) -> Iterator[subprocess.Popen[str]]:
    """Run ``tests.support.appender`` in another OS process: ``count`` thoughts to a session."""
    command = [sys.executable, "-m", "tests.support.appender", url, session_id, str(count)]
    process = subprocess.Popen(  # noqa: S603  # our interpreter, our module
        command, cwd=ROOT, env=child_env(), stderr=subprocess.PIPE, text=True
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=WAIT)
        if process.stderr is not None:
            process.stderr.close()


async def finished(process: subprocess.Popen[str]) -> None:
    """Wait (bounded) for an appending process to exit, and check it succeeded."""
    code = await asyncio.wait_for(asyncio.to_thread(process.wait), WAIT)
    errors = process.stderr.read() if process.stderr is not None else ""
    assert code == 0, errors


async def open_named(backend: Backend, application_name: str) -> PostgresEventStore:
    """Open a PostgreSQL store on ``backend``'s storage whose connections carry a name."""
    url = pg_url()
    assert url is not None
    assert backend.name == "postgres"
    return await PostgresEventStore.open(
        f"{url}?application_name={application_name}", pg_schema=backend.schema, pool_size=4
    )


async def listening_connections(application_name: str) -> int:
    """How many server connections named ``application_name`` are listening for notifications."""
    url = pg_url()
    assert url is not None
    admin = await asyncpg.connect(dsn(url))
    try:
        count = await admin.fetchval(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE application_name = $1 AND query LIKE 'LISTEN%'",
            application_name,
        )
    finally:
        await admin.close()
    return int(count)


async def end_connections(application_name: str) -> None:
    """End every server process named ``application_name``, as a server restart does."""
    url = pg_url()
    assert url is not None
    admin = await asyncpg.connect(dsn(url))
    try:
        pids = await admin.fetch(
            "SELECT pid FROM pg_stat_activity "
            "WHERE application_name = $1 AND pid <> pg_backend_pid()",
            application_name,
        )
        for row in pids:
            await admin.fetchval("SELECT pg_terminate_backend($1, 5000)", row["pid"])
    finally:
        await admin.close()


async def eventually(check: Callable[[], Awaitable[bool]]) -> None:
    """Wait until ``check()`` holds, re-checking every 10 ms (failing after :data:`WAIT`)."""
    async with asyncio.timeout(WAIT):
        # Polled: the condition lives in another process or on the server, with no event to wait on.
        while not await check():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
