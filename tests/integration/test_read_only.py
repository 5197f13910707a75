"""Reading commands never create or change a database: a missing ledger, another application's
database and a ledger that is only read are all left exactly as they were."""

import asyncio
import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import READS, cli, command_id, snapshot, sqlite_url
from tests.support.samples import assert_refuses_writes, record_sample
from thoughtledger import open_ledger, open_store
from thoughtledger.ledger.errors import SchemaVersionError


def read(capsys: pytest.CaptureFixture[str], argv: list[str], db: Path, out: Path) -> Any:
    return cli(capsys, *(part.format(out=out) for part in argv), "--db", sqlite_url(db))


@pytest.mark.parametrize("argv", READS, ids=command_id)
def test_a_missing_ledger_is_refused_and_nothing_is_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    typo = tmp_path / "no-such-folder" / "typo.db"
    ran = read(capsys, argv, typo, tmp_path / "export.jsonl")
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == f"thoughtledger: error: no ledger at {typo}\n"
    assert list(tmp_path.iterdir()) == []


def another_application(kind: str, folder: Path) -> Path:
    """A file that is not a ledger, as another program left it."""
    path = folder / "other-app.db"
    if kind in ("sqlite", "sqlite-wal"):
        with sqlite3.connect(path) as db:
            if kind == "sqlite-wal":
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
            db.execute("INSERT INTO notes (body) VALUES ('my own data')")
        db.close()
    elif kind == "text":
        path.write_text("these are my notes, not a database\n" * 100)
    else:
        path.touch()
    return path


NOT_LEDGERS = {
    "sqlite": "is an SQLite database but not a thoughtledger ledger",
    "sqlite-wal": "is an SQLite database but not a thoughtledger ledger",
    "text": "is not an SQLite database",
    "empty": "is an empty file, not a thoughtledger ledger",
}


@pytest.mark.parametrize("kind", NOT_LEDGERS)
@pytest.mark.parametrize("argv", READS, ids=command_id)
def test_another_applications_file_is_refused_and_left_byte_identical(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], kind: str
) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    path = another_application(kind, folder)
    before = snapshot(folder)
    ran = read(capsys, argv, path, tmp_path / "export.jsonl")
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == f"thoughtledger: error: {path} {NOT_LEDGERS[kind]}\n"
    assert snapshot(folder) == before  # no table added, no journal mode switched, no -wal/-shm
    assert not (tmp_path / "export.jsonl").exists()


def test_a_live_wal_database_of_another_application_is_refused_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "live.db"
    app = sqlite3.connect(path)
    try:
        app.execute("PRAGMA journal_mode = WAL")
        app.execute("CREATE TABLE notes (body TEXT)")
        app.execute("INSERT INTO notes VALUES ('only in the WAL so far')")
        app.commit()
        database, wal = path.read_bytes(), Path(f"{path}-wal").read_bytes()
        ran = cli(capsys, "sessions", "--db", sqlite_url(path))
        assert ran.err == f"thoughtledger: error: {path} {NOT_LEDGERS['sqlite']}\n"
        # The -shm is shared memory every reader of a live WAL database marks; these are not.
        assert (path.read_bytes(), Path(f"{path}-wal").read_bytes()) == (database, wal)
        tables = app.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        assert tables == [("notes",)]
    finally:
        app.close()


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A ledger holding the sample sessions, closed (no -wal or -shm beside it)."""
    folder = tmp_path / "ledger"
    asyncio.run(record_sample(sqlite_url(folder / "ledger.db")))
    assert snapshot(folder).keys() == {"ledger.db"}
    return folder / "ledger.db"


def test_reading_a_ledger_with_every_command_leaves_it_byte_identical(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, sample: Path
) -> None:
    before = snapshot(sample.parent)
    for argv in READS:
        ran = read(capsys, argv, sample, tmp_path / "export.jsonl")
        assert ran.code == 0, ran.err
    assert snapshot(sample.parent) == before  # and the -wal and -shm are gone again


@pytest.mark.anyio
async def test_a_ledger_is_read_beside_its_running_writer(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    async with open_ledger(sqlite_url(path), ttl=None) as writer:
        first = await writer.think(None, thought(1))  # a new ledger: its tables are in the WAL
        reader = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "thoughtledger.adapters.cli",
            "sessions",
            "--json",
            "--db",
            sqlite_url(path),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await reader.communicate()
        assert reader.returncode == 0, err.decode()
        assert first.session_id in out.decode()
        second = await writer.think(first.session_id, thought(2))  # the writer goes on
        assert second.entry.version == 3
    assert snapshot(tmp_path).keys() == {"ledger.db"}


def thought(number: int) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thought_number": number,
        "total_thoughts": 2,
        "next_thought_needed": number < 2,
    }


@pytest.mark.anyio
async def test_a_store_opened_read_only_refuses_every_write(sample: Path) -> None:
    before = snapshot(sample.parent)
    store = await open_store(sqlite_url(sample), read_only=True)
    await assert_refuses_writes(store)
    assert snapshot(sample.parent) == before


@pytest.mark.anyio
async def test_an_older_schema_is_refused_when_reading_and_never_upgraded(
    sample: Path,
) -> None:
    with sqlite3.connect(sample) as db:
        db.execute("DELETE FROM tl_schema")  # as a ledger written before the first schema step
    db.close()
    before = snapshot(sample.parent)
    with pytest.raises(SchemaVersionError, match="older than this thoughtledger reads"):
        await open_store(sqlite_url(sample), read_only=True)
    assert snapshot(sample.parent) == before


def test_a_read_only_ledger_reads_an_idle_session_without_recording_its_expiry(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    start = datetime(2026, 1, 1, tzinfo=UTC)

    async def record() -> str:
        async with open_ledger(url, clock=lambda: start) as ledger:
            session = await ledger.new_session()
            await session.process_sequential_thinking(
                thought="t", thought_number=1, total_thoughts=2, next_thought_needed=True
            )
            return session.id

    async def read(session_id: str) -> None:
        # A year idle, far past the default TTL: a writable ledger records the expiry here.
        later = start + timedelta(days=365)
        async with open_ledger(url, read_only=True, clock=lambda: later) as reader:
            state = await reader.state(session_id)
            assert state.ended is None

    session_id = asyncio.run(record())
    recorded = snapshot(tmp_path)
    asyncio.run(read(session_id))
    assert snapshot(tmp_path) == recorded
