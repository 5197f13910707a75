"""Reading commands on PostgreSQL create no schema and no table, and never upgrade one."""

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import pytest
import sqlalchemy as sa

from tests.support.backends import base_url, dsn
from tests.support.cli import READS, cli, command_id
from tests.support.samples import assert_refuses_writes, record_sample
from thoughtledger import open_ledger, open_store
from thoughtledger.ledger.errors import SchemaVersionError

pytestmark = pytest.mark.postgres


@asynccontextmanager
async def admin_connection(url: str, schema: str = "public") -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(dsn(url), server_settings={"search_path": schema})
    try:
        yield connection
    finally:
        await connection.close()


async def tables_in(url: str, schema: str) -> list[str]:
    async with admin_connection(url) as admin:
        rows = await admin.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", schema
        )
    return sorted(row["table_name"] for row in rows)


async def schema_exists(url: str, schema: str) -> bool:
    async with admin_connection(url) as admin:
        found: bool = await admin.fetchval(
            "SELECT EXISTS (SELECT 1 FROM information_schema.schemata WHERE schema_name = $1)",
            schema,
        )
    return found


@pytest.fixture
def schema_name() -> Iterator[str]:
    """A schema name no one uses; whatever a test made under it is dropped after."""
    name = f"tl_ro_{uuid.uuid4().hex[:12]}"
    yield name

    async def drop() -> None:
        async with admin_connection(base_url()) as admin:
            await admin.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    asyncio.run(drop())


@pytest.mark.parametrize("existing", [False, True], ids=["missing-schema", "empty-schema"])
@pytest.mark.parametrize("argv", READS, ids=command_id)
def test_a_schema_without_a_ledger_is_refused_and_nothing_is_created(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    schema_name: str,
    argv: list[str],
    existing: bool,
) -> None:
    url = base_url()
    if existing:

        async def create() -> None:
            async with admin_connection(url) as admin:
                await admin.execute(f'CREATE SCHEMA "{schema_name}"')

        asyncio.run(create())
    command = [part.format(out=f"{tmp_path}/export.jsonl") for part in argv]
    written = f"{url}?schema={schema_name}"
    ran = cli(capsys, *command, "--db", written)
    assert (ran.code, ran.out) == (1, "")
    # Named as written (its schema in it: not named twice).
    assert (
        ran.err == f"thoughtledger: error: no ledger at {written}: it has no thoughtledger tables\n"
    )
    assert asyncio.run(schema_exists(url, schema_name)) is existing
    assert asyncio.run(tables_in(url, schema_name)) == []


def test_a_database_without_a_ledger_gets_no_tables_in_public(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = base_url()
    database = f"tl_ro_{uuid.uuid4().hex[:12]}"

    async def admin(statement: str) -> None:
        async with admin_connection(url) as connection:
            await connection.execute(statement)

    asyncio.run(admin(f'CREATE DATABASE "{database}"'))
    other = sa.make_url(url).set(database=database).render_as_string(hide_password=False)
    try:
        ran = cli(capsys, "sessions", "--db", other)
        assert ran.code == 1
        assert "no ledger at" in ran.err
        assert asyncio.run(tables_in(other, "public")) == []
    finally:
        asyncio.run(admin(f'DROP DATABASE "{database}"'))


@pytest.mark.anyio
async def test_a_postgres_store_opened_read_only_refuses_every_write(schema_name: str) -> None:
    url = f"{base_url()}?schema={schema_name}"
    await record_sample(url)
    store = await open_store(url, read_only=True)
    await assert_refuses_writes(store)


@pytest.mark.anyio
async def test_an_older_postgres_schema_is_refused_when_reading_and_never_upgraded(
    schema_name: str,
) -> None:
    url = f"{base_url()}?schema={schema_name}"
    async with open_ledger(url):
        pass
    async with admin_connection(base_url(), schema_name) as admin:
        await admin.execute("DELETE FROM tl_schema")
    with pytest.raises(SchemaVersionError, match="older than this thoughtledger reads"):
        await open_store(url, read_only=True)
    async with admin_connection(base_url(), schema_name) as admin:
        assert await admin.fetchval("SELECT count(*) FROM tl_schema") == 0
