"""SQLite's search index as a stopped writer can leave it: thoughts waiting to be indexed."""

import sqlite3
from pathlib import Path

import anyio

from tests.support.external import call
from thoughtledger import Ledger
from thoughtledger.ledger.store.search_text import sqlite_text


def index_state(path: Path) -> tuple[int, int]:
    """Where the index stands, and the log's last position."""
    with sqlite3.connect(path) as db:
        through = db.execute("SELECT position FROM tl_search_through").fetchone()[0]
        end = db.execute("SELECT max(position) FROM tl_events").fetchone()[0]
    db.close()
    return through, end


def indexed(path: Path, word: str) -> list[int]:
    """The positions the index itself holds for ``word``."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT rowid FROM tl_search WHERE tl_search MATCH ?", (word,))
        found = sorted(row[0] for row in rows)
    db.close()
    return found


def take_back_out_of_the_index(path: Path, last: int) -> None:
    """Leave the ``last`` events waiting, as a writer that stopped before indexing them."""
    with sqlite3.connect(path) as db:
        through, end = index_state(path)
        assert through == end
        low = end - last
        db.execute(
            "INSERT INTO tl_search(tl_search, rowid, text) SELECT 'delete', position, t FROM "  # noqa: S608  # our constant
            f"(SELECT position, {sqlite_text('payload')} AS t FROM tl_events "
            "WHERE position > ?) WHERE t IS NOT NULL",
            (low,),
        )
        db.execute("UPDATE tl_search_through SET position = ?", (low,))
    db.close()


async def record_texts(ledger: Ledger, texts: list[str]) -> str:
    """Record one new session of ``texts``, a thought each; return its id."""
    session: str | None = None
    for number, text in enumerate(texts, start=1):
        session = (await ledger.think(session, call(number, text, total=len(texts)))).session_id
    assert session is not None
    return session


async def caught_up(path: Path) -> None:
    """Wait (up to 10 s) until the index has taken in the whole log."""
    with anyio.fail_after(10):
        while index_state(path)[0] < index_state(path)[1]:  # noqa: ASYNC110  # the file's state
            await anyio.sleep(0.02)
