"""A PostgreSQL ledger rides out lost connections: one retry, no error, no duplicate."""

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import asyncpg
import pytest
import sqlalchemy as sa

from tests.support import pg_cluster
from tests.support.backends import base_url, dsn
from tests.support.raw_store import raw_store
from tests.support.samples import thought as sample_thought
from thoughtledger import Ledger, open_ledger

# The server cuts connections here on purpose: asyncpg warns about each one SQLAlchemy dropped
# dead (see pg_cluster.collect_cut_connections), which is expected, not a leak of a live one.
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.postgres,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


@pytest.fixture(autouse=True)
def _cut_connections_collected() -> Iterator[None]:
    yield
    pg_cluster.collect_cut_connections()


def thought(number: int) -> dict[str, Any]:
    return sample_thought(number, 3)


@asynccontextmanager
async def ledger_in_new_schema(url: str, **query: str) -> AsyncIterator[tuple[Ledger, str]]:
    """Open a ledger in a schema of its own; yield it with the schema's name; drop it after."""
    schema = f"tl_fault_{uuid.uuid4().hex[:12]}"
    extra = "".join(f"&{key}={value}" for key, value in query.items())
    try:
        async with open_ledger(f"{url}?schema={schema}{extra}", ttl=None) as ledger:
            yield ledger, schema
    finally:
        admin = await asyncpg.connect(dsn(base_url()))
        try:
            await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await admin.close()


async def stored_thoughts(schema: str) -> list[tuple[int, str]]:
    admin = await asyncpg.connect(dsn(base_url()), server_settings={"search_path": schema})
    try:
        rows = await admin.fetch("SELECT version, event_type FROM tl_events ORDER BY version")
    finally:
        await admin.close()
    return [(row["version"], row["event_type"]) for row in rows]


async def end_connections(application_name: str) -> int:
    """End every server process of ``application_name``, as a server restart does; wait till gone.

    Ended from a connection of its own, and only this ledger's: other tests share the server.
    """
    admin = await asyncpg.connect(dsn(base_url()))
    try:
        # The pids first, then one by one: in one WHERE clause nothing orders the two conditions.
        rows = await admin.fetch(
            "SELECT pid FROM pg_stat_activity "
            "WHERE application_name = $1 AND pid <> pg_backend_pid()",
            application_name,
        )
        ended = 0
        for row in rows:
            ended += bool(await admin.fetchval("SELECT pg_terminate_backend($1, 5000)", row["pid"]))
    finally:
        await admin.close()
    return ended


async def test_connections_cut_by_the_server_are_retried_without_error_or_duplicate() -> None:
    url = base_url()
    name = f"tl_test_{uuid.uuid4().hex[:12]}"
    async with ledger_in_new_schema(url, application_name=name) as (ledger, schema):
        first = await ledger.think(None, thought(1))
        session = first.session_id
        assert await end_connections(name) >= 1
        second = await ledger.think(session, thought(2))  # an append on a cut connection
        assert (second.session_id, second.entry.thought_number) == (session, 2)
        assert await raw_store(ledger).stream_head(session) is not None  # a pooled read connection
        assert await end_connections(name) >= 2  # the writer's and the pooled reader's
        events = await raw_store(ledger).read_stream(session)  # a read on a cut connection
        assert [event.version for event in events] == [1, 2, 3]
        assert (await ledger.verify(session)).ok
        assert await stored_thoughts(schema) == [
            (1, "session.started"),
            (2, "thought.recorded"),
            (3, "thought.recorded"),
        ]


class CuttingProxy:
    """A TCP relay to PostgreSQL that, once armed, loses the answer to the next INSERT.

    It closes the connection instead of passing on the server's answer, after the server has
    committed (the answer ends with ReadyForQuery): the case where a retry must not duplicate.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.armed = False
        self.cuts = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> int:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with suppress(asyncio.CancelledError):
                await task
        await self._server.wait_closed()

    async def _relay(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        server_in, server_out = await asyncio.open_connection(self.host, self.port)
        upstream = asyncio.ensure_future(self._pipe(client_in, server_out, cut=False))
        downstream = asyncio.ensure_future(self._pipe(server_in, client_out, cut=True))
        self._tasks |= {upstream, downstream}
        await asyncio.wait({upstream, downstream}, return_when=asyncio.FIRST_COMPLETED)
        for task in (upstream, downstream):
            task.cancel()
        for writer in (client_out, server_out):
            writer.close()

    async def _pipe(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, *, cut: bool
    ) -> None:
        while data := await source.read(65536):
            if cut and self.armed and b"INSERT 0 " in data and b"Z\x00\x00\x00\x05" in data:
                self.armed = False
                self.cuts += 1
                return  # the committed answer is dropped, and the connection with it
            sink.write(data)
            await sink.drain()


async def test_an_append_whose_answer_was_lost_after_commit_is_not_written_twice() -> None:
    url = base_url()
    parsed = sa.make_url(url)
    proxy = CuttingProxy(parsed.host or "127.0.0.1", parsed.port or 5432)
    async with proxy as port:
        relayed = parsed.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
        async with ledger_in_new_schema(relayed) as (ledger, schema):
            first = await ledger.think(None, thought(1))
            proxy.armed = True
            second = await ledger.think(first.session_id, thought(2))
            third = await ledger.think(first.session_id, thought(3))
            assert proxy.cuts == 1
            assert (second.entry.thought_number, third.entry.thought_number) == (2, 3)
            assert (await ledger.verify(first.session_id)).ok
            assert await stored_thoughts(schema) == [
                (1, "session.started"),
                (2, "thought.recorded"),
                (3, "thought.recorded"),
                (4, "thought.recorded"),
            ]
