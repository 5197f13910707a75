"""Opening a ledger: URLs, and every way opening can fail with a clear error and no writes."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.backends import pg_url
from thoughtledger.api.bootstrap import open_ledger, open_store, resolve_url
from thoughtledger.ledger.errors import (
    InvalidInputError,
    NotALedgerError,
    SchemaVersionError,
    StoreUnavailableError,
)
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.store.postgres import PostgresEventStore
from thoughtledger.ledger.store.schema_steps import MIGRATIONS
from thoughtledger.ledger.store.sqlite import SqliteEventStore

pytestmark = pytest.mark.anyio


async def test_sqlite_urls_follow_sqlalchemy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = await open_store("sqlite:///relative.db")
    absolute = await open_store(f"sqlite:///{tmp_path / 'absolute.db'}")
    plain = await open_store(str(tmp_path / "plain.db"))
    try:
        assert isinstance(relative, SqliteEventStore)
        assert relative.path == Path("relative.db")
        assert isinstance(absolute, SqliteEventStore)
        assert absolute.path == tmp_path / "absolute.db"
        assert isinstance(plain, SqliteEventStore)
    finally:
        for store in (relative, absolute, plain):
            await store.aclose()
    assert (tmp_path / "relative.db").exists()


async def test_full_durability_is_chosen_by_url(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'l.db'}?durability=full")
    assert isinstance(store, SqliteEventStore)
    assert store.durability == "full"
    await store.append("s", [], expected_version=0)
    await store.aclose()
    with pytest.raises(InvalidInputError, match="durability"):
        await open_store(f"sqlite:///{tmp_path / 'l.db'}?durability=sometimes")


async def test_the_default_ledger_lives_in_the_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("THOUGHTLEDGER_URL", raising=False)
    assert resolve_url() == f"sqlite:///{tmp_path / 'thoughtledger' / 'ledger.db'}"
    async with open_ledger() as ledger:
        await ledger.think(
            "s",
            {
                "thought": "t",
                "thought_number": 1,
                "total_thoughts": 1,
                "next_thought_needed": False,
            },
        )
    assert (tmp_path / "thoughtledger" / "ledger.db").exists()
    monkeypatch.setenv("THOUGHTLEDGER_URL", "memory://")
    store = await open_store()
    assert isinstance(store, MemoryEventStore)


async def test_unknown_urls_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="unknown ledger URL"):
        await open_store("mysql://nobody@localhost/db")
    with pytest.raises(InvalidInputError, match="expected sqlite:///"):
        await open_store("sqlite://")


async def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_bytes(b"these are my notes, not a database\n" * 200)
    before = bogus.read_bytes()
    with pytest.raises(NotALedgerError, match="not an SQLite database"):
        await SqliteEventStore.open(bogus)
    assert bogus.read_bytes() == before


def _application_database(path: Path) -> bytes:
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO customers (name) VALUES ('Ada')")
    connection.close()
    return path.read_bytes()


async def test_another_applications_sqlite_database_is_refused_untouched(tmp_path: Path) -> None:
    # A mistyped --db: the ledger's tables (and WAL mode) must not land in someone else's file.
    other = tmp_path / "shop.db"
    before = _application_database(other)
    with pytest.raises(NotALedgerError) as refused:
        await SqliteEventStore.open(other)
    assert str(refused.value) == (
        f"{other} is another application's database (tables such as 'customers', none of a "
        "ledger's); nothing was changed. Give the path of a new file or of an existing ledger"
    )
    assert other.read_bytes() == before
    assert not Path(f"{other}-wal").exists()  # noqa: ASYNC240  # a test's one look at a file


async def test_an_empty_sqlite_file_becomes_a_ledger(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    store = await SqliteEventStore.open(empty)
    await store.aclose()
    reopened = await SqliteEventStore.open(empty)  # its own tables are no reason to refuse it
    await reopened.aclose()


async def test_a_directory_is_not_a_ledger_file(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailableError, match="is a directory"):
        await SqliteEventStore.open(tmp_path)


async def test_a_newer_sqlite_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    await (await SqliteEventStore.open(path)).aclose()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO tl_schema (version, applied_at) VALUES (99, 'later')")
    with pytest.raises(SchemaVersionError, match="schema version 99"):
        await SqliteEventStore.open(path)


async def test_reopening_an_up_to_date_schema_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    for _ in range(3):
        await (await SqliteEventStore.open(path)).aclose()
    with sqlite3.connect(path) as db:
        steps = db.execute("SELECT version FROM tl_schema").fetchall()
    assert steps == [(step,) for step in sorted(MIGRATIONS)]


async def test_an_unreachable_postgres_is_a_clear_error() -> None:
    with pytest.raises(StoreUnavailableError, match="cannot"):
        await PostgresEventStore.open("postgresql+asyncpg://nobody@127.0.0.1:1/none")


@pytest.mark.postgres
async def test_a_newer_postgres_schema_is_refused() -> None:
    url = pg_url()
    if url is None:
        pytest.skip("no PostgreSQL configured")
    import uuid

    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    schema = f"tl_test_{uuid.uuid4().hex[:12]}"
    await (await PostgresEventStore.open(url, pg_schema=schema)).aclose()
    engine = create_async_engine(url, connect_args={"server_settings": {"search_path": schema}})
    try:
        async with engine.begin() as connection:
            await connection.execute(
                sa.text("INSERT INTO tl_schema (version, applied_at) VALUES (99, 'later')")
            )
        with pytest.raises(SchemaVersionError, match="schema version 99"):
            await PostgresEventStore.open(url, pg_schema=schema)
    finally:
        async with engine.begin() as connection:
            await connection.execute(sa.schema.DropSchema(schema, cascade=True))
        await engine.dispose()


@pytest.mark.postgres
async def test_another_applications_postgres_schema_is_refused_untouched() -> None:
    url = pg_url()
    if url is None:
        pytest.skip("no PostgreSQL configured")
    import uuid

    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    schema = f"tl_test_{uuid.uuid4().hex[:12]}"
    engine = create_async_engine(url, connect_args={"server_settings": {"search_path": schema}})
    try:
        async with engine.begin() as connection:
            await connection.execute(sa.schema.CreateSchema(schema))
        # An empty schema (or database) is set up as a new ledger.
        await (await PostgresEventStore.open(url, pg_schema=f"{schema}_new")).aclose()
        async with engine.begin() as connection:
            await connection.execute(sa.text("CREATE TABLE customers (id int, name text)"))
        with pytest.raises(NotALedgerError) as refused:
            await PostgresEventStore.open(url, pg_schema=schema)
        assert f"(schema {schema}) is another application's database (tables such as " in str(
            refused.value
        )
        assert "nothing was changed" in str(refused.value)
        async with engine.connect() as connection:
            tables = await connection.execute(
                sa.text(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema()"
                )
            )
            assert tables.scalars().all() == ["customers"]
    finally:
        async with engine.begin() as connection:
            for name in (schema, f"{schema}_new"):
                await connection.execute(sa.schema.DropSchema(name, cascade=True))
        await engine.dispose()


def test_reopening_a_current_sqlite_ledger_imports_no_sqlalchemy(tmp_path: Path) -> None:
    # The common open (schema and views current) is one read on the held connection: checking
    # the views against the definition of a thought must not load SQLAlchemy (~0.3 s).
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    script = (
        "import asyncio, sys\n"
        "from thoughtledger import open_ledger\n"
        "async def main():\n"
        f"    async with open_ledger({url!r}):\n"
        "        pass\n"
        "asyncio.run(main())\n"
        "print('sqlalchemy' in sys.modules)\n"
    )
    first = subprocess.run(  # noqa: S603  # this interpreter, our own script
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    again = subprocess.run(  # noqa: S603  # this interpreter, our own script
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert first.stdout.strip() == "True"  # creating the schema needs it
    assert again.stdout.strip() == "False"
