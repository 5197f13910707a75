"""An older ledger's search triggers learn every thought type when it is upgraded.

The trigger that takes a redacted thought's words out of the index names the thought types it
acts on; a ledger made before captured reasoning (``thought.captured``) existed has it without
that type, and schema step 15 makes it again.
"""

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from tests.support.backends import Backend, backend_for, base_url, dsn
from thoughtledger import open_ledger

pytestmark = pytest.mark.anyio

CAPTURED = "thought.captured"
OLDER_TYPES = "'branch.extended', 'branch.opened', 'thought.generated', 'thought.recorded', " + (
    "'thought.revised'"
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def durable(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as chosen:
        yield chosen


async def _trigger_sql(backend: Backend) -> str:
    if backend.name == "sqlite":
        with sqlite3.connect(backend.sqlite_path) as db:
            (text,) = db.execute(
                "SELECT sql FROM sqlite_master WHERE name = 'tl_search_stripped'"
            ).fetchone()
        db.close()
        return str(text)
    connection = await asyncpg.connect(
        dsn(base_url()), server_settings={"search_path": backend.schema}
    )
    try:
        return str(
            await connection.fetchval(
                "SELECT pg_get_triggerdef(oid) FROM pg_trigger "
                "WHERE tgname = 'tl_search_stripped' AND tgrelid = 'tl_events'::regclass"
            )
        )
    finally:
        await connection.close()


async def _taken_back_to_14(backend: Backend, made: str) -> None:
    """The trigger as a ledger of schema 14 has it: without the captured type."""
    if backend.name == "sqlite":
        older = made.replace(f"'{CAPTURED}', ", "")
        with sqlite3.connect(backend.sqlite_path) as db:
            db.execute("DROP TRIGGER tl_search_stripped")
            db.execute(older)
            db.execute("DELETE FROM tl_schema WHERE version > 14")
        db.close()
        return
    connection = await asyncpg.connect(
        dsn(base_url()), server_settings={"search_path": backend.schema}
    )
    try:
        await connection.execute("DROP TRIGGER tl_search_stripped ON tl_events")
        await connection.execute(
            "CREATE TRIGGER tl_search_stripped AFTER UPDATE OF payload ON tl_events FOR EACH ROW "
            f"WHEN (NEW.event_type IN ({OLDER_TYPES})) EXECUTE FUNCTION tl_search_stripped()"
        )
        await connection.execute("DELETE FROM tl_schema WHERE version > 14")
    finally:
        await connection.close()


async def test_upgrading_makes_the_redaction_trigger_again_with_every_thought_type(
    durable: Backend,
) -> None:
    assert durable.url is not None
    async with open_ledger(durable.url) as ledger:
        await ledger.think(
            None,
            {
                "thought": "a",
                "thought_number": 1,
                "total_thoughts": 1,
                "next_thought_needed": False,
            },
        )
    made = await _trigger_sql(durable)
    assert CAPTURED in made
    await _taken_back_to_14(durable, made)
    assert CAPTURED not in await _trigger_sql(durable)
    async with open_ledger(durable.url):
        pass
    assert CAPTURED in await _trigger_sql(durable)
