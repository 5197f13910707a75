"""``export --all --otlp`` on PostgreSQL: events a page reader cannot see yet are still sent.

A reader of the log's pages sees no position that a transaction still in flight anywhere on the
server precedes; the export reads what those pages did not show from the sessions' streams.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import asyncpg
import pytest

from tests.support.backends import Backend, backend_for, base_url, dsn
from tests.support.cli import Ran, cli
from tests.support.factories import started, thought
from tests.support.otlp import attributes, otlp_receiver

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@asynccontextmanager
async def open_transaction(backend: Backend) -> AsyncIterator[None]:
    """Another client's transaction that holds a transaction id until the block ends."""
    connection = await asyncpg.connect(
        dsn(base_url()), server_settings={"search_path": backend.schema}
    )
    try:
        await connection.execute("BEGIN")
        await connection.fetchval("SELECT pg_current_xact_id()")
        yield
        await connection.execute("ROLLBACK")
    finally:
        await connection.close()


async def test_events_behind_a_transaction_in_flight_are_sent_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    async with backend_for("postgres", tmp_path) as backend:
        store = await backend.open()
        try:
            await store.append("a", [started(), thought(1), thought(2)], expected_version=0)
            await store.append("b", [started(), thought(1)], expected_version=0)
            async with open_transaction(backend):
                await store.append("b", [thought(2), thought(3)], expected_version=2)
                visible = await store.rows.read_all_event_rows(limit=100)
                assert [row.session_id for row in visible].count("b") < 4  # the premise
                url = backend.url
                assert url is not None

                def export(endpoint: str) -> Ran:
                    return cli(capsys, "export", "--all", "--otlp", endpoint, "--db", url)

                with otlp_receiver() as (endpoint, received):
                    ran = await anyio.to_thread.run_sync(export, endpoint)
        finally:
            await store.aclose()
    assert ran.code == 0, ran.err
    assert "sent 7 spans of 2 sessions" in ran.out
    roots = {
        attributes(span)["session.id"]: attributes(span)
        for span in received.spans
        if not span.parent_span_id
    }
    assert roots["b"]["thoughtledger.session.events"] == 4
    numbers = sorted(
        attributes(span)["thoughtledger.thought_number"]
        for span in received.spans
        if span.parent_span_id and attributes(span)["session.id"] == "b"
    )
    assert numbers == [1, 2, 3]
