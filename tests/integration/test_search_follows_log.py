"""SQLite's search index follows the log in batches, and a search finds every thought at once.

A thought is searchable from the moment its append answers, through the index or, while the
index has not taken it in, from the log itself: for the writer, for a reader that never writes,
and after a writer stopped with thoughts waiting (made here by taking the newest thoughts back out
of the index, as such a writer leaves it).
"""

from pathlib import Path

import pytest

from tests.support.cli import sqlite_url
from tests.support.search_index import (
    caught_up,
    index_state,
    indexed,
    record_texts,
    take_back_out_of_the_index,
)
from thoughtledger import open_ledger
from thoughtledger.ledger.events import ThoughtRecorded
from thoughtledger.ledger.store.sqlite import SqliteEventStore

pytestmark = pytest.mark.anyio

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


async def recorded(path: Path, texts: list[str]) -> str:
    """One session of ``texts``, the ledger closed again (its index then complete)."""
    async with open_ledger(sqlite_url(path)) as ledger:
        return await record_texts(ledger, texts)


async def left_waiting(folder: Path, template: str, last: int) -> tuple[Path, list[str], str]:
    """A ledger of a thought per word of ``WORDS`` whose ``last`` events wait for the index."""
    path = folder / "ledger.db"
    texts = [template.format(word) for word in WORDS]
    session = await recorded(path, texts)
    take_back_out_of_the_index(path, last)
    return path, texts, session


async def texts_found(url: str, query: str, *, read_only: bool) -> list[str]:
    async with open_ledger(url, read_only=read_only) as ledger:
        page = await ledger.search(query)
    return [result.text for result in page.results]


async def test_thoughts_the_index_has_not_taken_in_are_found_by_a_reader_that_never_writes(
    tmp_path: Path,
) -> None:
    path, texts, _ = await left_waiting(tmp_path, "{} shared note", 3)
    assert indexed(path, "shared") == [2, 3, 4]  # the session's start, then three thoughts
    url = sqlite_url(path)
    assert sorted(await texts_found(url, "shared", read_only=True)) == sorted(texts)
    assert await texts_found(url, "foxtrot", read_only=True) == ["foxtrot shared note"]
    assert await texts_found(url, '"delta shared"', read_only=True) == ["delta shared note"]
    assert (
        await texts_found(url, "shared -echo -alpha", read_only=True)
        == [text for text in texts if not text.startswith(("echo", "alpha"))][::-1]
    )  # equal scores: newest first
    assert index_state(path)[0] < index_state(path)[1]  # reading took nothing in


async def test_a_writer_that_opens_takes_in_what_a_stopped_writer_left_waiting(
    tmp_path: Path,
) -> None:
    path, _, _ = await left_waiting(tmp_path, "{} shared note", 3)
    async with open_ledger(sqlite_url(path)) as ledger:
        assert len((await ledger.search("shared")).results) == len(WORDS)
    through, end = index_state(path)
    assert through == end
    assert indexed(path, "shared") == list(range(2, 2 + len(WORDS)))


async def test_the_index_catches_up_soon_after_appends_pause(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    async with open_ledger(sqlite_url(path)) as ledger:
        await record_texts(ledger, ["golf hotel", "india juliet"])
        await caught_up(path)
        assert indexed(path, "juliet") == [3]


async def test_a_waiting_thought_redacted_never_enters_the_index(tmp_path: Path) -> None:
    path, _, session = await left_waiting(tmp_path, "{} secret plan", 2)
    url = sqlite_url(path)
    async with open_ledger(url) as ledger:
        await ledger.redaction.redact(session, thought_number=6, reason="leak", by="test")
        assert "foxtrot secret plan" not in await texts_found(url, "secret", read_only=True)
    assert await texts_found(url, "foxtrot", read_only=True) == []
    assert indexed(path, "foxtrot") == []
    assert indexed(path, "echo") == [6]
    assert index_state(path)[0] == index_state(path)[1]


async def test_a_catch_up_leaves_full_durability_as_it_found_it(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    store = await SqliteEventStore.open(path, durability="full")
    try:
        thought = ThoughtRecorded(
            thought="kilo lima", thought_number=1, total_thoughts=1, next_thought_needed=False
        )
        await store.append("s", [thought], expected_version=0)
        await caught_up(path)
        writer = store._writer.connection
        assert writer.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        await store.aclose()
    assert indexed(path, "lima") == [1]
