"""A ledger written before the listing indexes and the analytics views existed (schema 1), before
the loop marks (schema 9), or before the search index followed the log (schema 10), upgrades when
opened for writing, and reads as it is, untouched, when opened read-only."""

import asyncio
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import snapshot, sqlite_url
from tests.support.head_rows import take_back_heads
from thoughtledger import open_ledger
from thoughtledger.ledger.checkpoint import Checkpoint, Signer
from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.store.search_index import SEARCH_INDEX, DialectDDL

pytestmark = pytest.mark.anyio

FIRST = {
    "thought": "t word",
    "thought_number": 1,
    "total_thoughts": 1,
    "next_thought_needed": False,
}


def take_back_loops_follow(db: sqlite3.Connection) -> None:
    """Undo schema steps 19 and 12 (the loop marks following the log) in a caught-up database."""
    for statement in take_back_heads("sqlite"):
        db.execute(statement)
    db.execute("DROP VIEW tl_session_loops")
    db.execute("DROP TABLE tl_loops_through")
    db.execute("CREATE TABLE tl_loops_behind (session_id VARCHAR(128) NOT NULL PRIMARY KEY)")
    # Step 10's view, as it wrote it: marks current unless the session is listed as behind.
    db.execute(
        "CREATE VIEW tl_session_loops AS SELECT s.session_id AS session_id, "
        "(SELECT count(*) FROM tl_loops l WHERE l.session_id = s.session_id) AS repeats, "
        "CASE WHEN EXISTS (SELECT 1 FROM tl_loops_behind b WHERE b.session_id = s.session_id) "
        "THEN 0 ELSE 1 END AS marks_current FROM tl_sessions s"
    )
    db.execute("DELETE FROM tl_schema WHERE version > 11")


def take_back_search_follows(db: sqlite3.Connection) -> None:
    """Undo schema steps 12 and 11 (the index following the log) in an open, indexed database."""
    take_back_loops_follow(db)
    db.execute("DROP TABLE tl_search_through")
    db.execute("DROP TRIGGER tl_search_stripped")
    for statement in SEARCH_INDEX[1:3]:  # step 9's triggers, as it wrote them
        assert isinstance(statement, DialectDDL)
        db.execute(statement.sqlite)
    db.execute("DELETE FROM tl_schema WHERE version > 10")


def take_back_loop_marks(db: sqlite3.Connection) -> None:
    """Undo schema steps 12, 11 and 10 (the loop marks) in an open database."""
    take_back_search_follows(db)
    db.execute("DROP VIEW tl_session_loops")
    db.execute("DROP TABLE tl_loops")
    db.execute("DROP TABLE tl_loops_behind")
    db.execute("DELETE FROM tl_schema WHERE version > 9")


async def schema_1_ledger(path: Path) -> str:
    """A ledger with one session, taken back to schema 1 as the previous release left it."""
    async with open_ledger(sqlite_url(path)) as ledger:
        session = (await ledger.think(None, FIRST)).session_id
    with sqlite3.connect(path) as db:
        db.execute("DROP VIEW tl_thoughts")
        db.execute("DROP VIEW tl_session_stats")
        db.execute("DROP INDEX tl_events_owner")
        db.execute("DROP INDEX tl_events_redactions")
        db.execute("DROP VIEW tl_annotations")
        db.execute("DROP INDEX tl_events_annotations")
        db.execute("DROP INDEX tl_events_fork_of")
        db.execute("DROP INDEX tl_events_counted")
        db.execute("DROP VIEW tl_actions")
        db.execute("DROP INDEX tl_events_actions")
        db.execute("DROP TABLE tl_tree_nodes")  # its index goes with it
        db.execute("DROP TABLE tl_tree")
        take_back_loop_marks(db)
        db.execute("DROP INDEX tl_sessions_started")
        db.execute("DROP TRIGGER tl_search_added")
        db.execute("DROP TRIGGER tl_search_stripped")
        db.execute("DROP TABLE tl_search")
        db.execute("DELETE FROM tl_schema WHERE version > 1")
    db.close()
    return session


def indexes(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('index', 'view')"
        ).fetchall()
        version = db.execute("SELECT max(version) FROM tl_schema").fetchone()[0]
    db.close()
    return {name for (name,) in rows if name.startswith("tl_")} | {f"schema {version}"}


async def test_a_schema_1_ledger_reads_read_only_without_being_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    session = await schema_1_ledger(path)
    before = snapshot(tmp_path)
    async with open_ledger(sqlite_url(path), read_only=True) as ledger:
        page = await ledger.recent_sessions()
    assert [state.session_id for state in page.sessions] == [session]
    assert snapshot(tmp_path) == before
    assert indexes(path) == {"schema 1"}


async def test_searching_a_ledger_older_than_the_index_read_only_says_how_to_build_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    await schema_1_ledger(path)
    async with open_ledger(sqlite_url(path), read_only=True) as ledger:
        with pytest.raises(StoreError, match="no search index yet"):
            await ledger.search("word")


async def test_a_schema_1_ledger_is_upgraded_when_opened_for_writing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    session = await schema_1_ledger(path)
    signer = Signer.generate("log")
    async with open_ledger(sqlite_url(path)) as ledger:
        page = await ledger.recent_sessions()
        # The tree is built over the events recorded before it existed.
        note = await ledger.proofs.checkpoint(signer)
        assert (await ledger.proofs.verify_checkpoint(note, signer.verifier())).ok
        # So is the search index: the thought written before it is found.
        found = await ledger.search("word")
    assert [(hit.session_id, hit.version) for hit in found.results] == [(session, 2)]
    assert Checkpoint.open(note, signer.verifier()).size == 2
    assert [state.session_id for state in page.sessions] == [session]
    assert indexes(path) == {
        "schema 20",
        "tl_session_loops",
        "tl_events_first",
        "tl_events_started",
        "tl_events_owner",
        "tl_thoughts",
        "tl_session_stats",
        "tl_tree_blocks",
        "tl_events_redactions",
        "tl_annotations",
        "tl_events_annotations",
        "tl_events_fork_of",
        "tl_events_counted",
        "tl_actions",
        "tl_events_actions",
    }


LOOPING = ["Read the log.", "Grep for it.", "read the LOG", "Read the log!"]


async def schema_9_ledger_with_loops(path: Path) -> str:
    """A ledger with one session of two repeats, taken back to schema 9 (no loop marks)."""
    async with open_ledger(sqlite_url(path)) as ledger:
        session: str | None = None
        for number, text in enumerate(LOOPING, start=1):
            arguments = {**FIRST, "thought": text, "thought_number": number, "total_thoughts": 4}
            session = (await ledger.think(session, arguments)).session_id
    assert session is not None
    with sqlite3.connect(path) as db:
        take_back_loop_marks(db)
    db.close()
    return session


def session_loops(path: Path) -> list[tuple[str, int, int]]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT * FROM tl_session_loops").fetchall()
    db.close()
    return rows


async def test_a_schema_9_ledger_read_only_counts_its_loops_by_folding_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    await schema_9_ledger_with_loops(path)
    async with open_ledger(sqlite_url(path), read_only=True) as ledger:
        counted = await ledger.stats.loops()
    assert (counted.sessions, counted.sessions_with_loops, counted.repeats) == (1, 1, 2)
    assert "schema 9" in indexes(path)  # read-only: untouched


async def test_a_schema_9_ledger_gets_its_loop_marks_in_the_background_once_opened_for_writing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    session = await schema_9_ledger_with_loops(path)
    async with open_ledger(sqlite_url(path)) as ledger:
        # Answered at once (the opening waits for no marks): counted by folding meanwhile.
        counted = await ledger.stats.loops()
        assert (counted.sessions_with_loops, counted.repeats) == (1, 2)
        assert "schema 20" in indexes(path)
        # The marks are taken in in the background, soon after the opening.
        for _ in range(600):  # a bounded wait: 30 s at most
            if session_loops(path) == [(session, 2, 1)]:
                break
            await asyncio.sleep(0.05)
        assert session_loops(path) == [(session, 2, 1)]
        assert await ledger.stats.loops() == counted


async def test_a_schema_10_ledger_searches_read_only_untouched_then_follows_once_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    async with open_ledger(sqlite_url(path)) as ledger:
        session = (await ledger.think(None, FIRST)).session_id
    with sqlite3.connect(path) as db:
        take_back_search_follows(db)
    db.close()
    before = snapshot(tmp_path)
    async with open_ledger(sqlite_url(path), read_only=True) as ledger:
        page = await ledger.search("word")
    assert [(hit.session_id, hit.text) for hit in page.results] == [(session, "t word")]
    assert snapshot(tmp_path) == before
    assert "schema 10" in indexes(path)
    async with open_ledger(sqlite_url(path)) as ledger:
        second = {**FIRST, "thought": "another word", "thought_number": 2, "total_thoughts": 2}
        await ledger.think(session, second)
        assert len((await ledger.search("word")).results) == 2
    assert "schema 20" in indexes(path)
    with sqlite3.connect(path) as db:
        triggers = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
        through = db.execute("SELECT position FROM tl_search_through").fetchone()[0]
        end = db.execute("SELECT max(position) FROM tl_events").fetchone()[0]
    db.close()
    assert triggers == {"tl_search_stripped"}
    assert through == end
