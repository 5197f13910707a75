"""A redacted word leaves the search index's structures, not only its answers.

PostgreSQL's ``VACUUM`` takes a deleted row out of a GIN index's posting lists but keeps its words
as keys of the index's entry tree, so physical backups and replicas would keep them; FTS5's
``delete`` adds a tombstone (with the word) in a new segment until the segments are merged.
Here the thought is in the index before it is redacted (the ledger closed, so the index took
everything in), and the index's own pages are read afterwards: the GIN index's file, read by the
server, and SQLite's FTS5 shadow table and its vocabulary.
"""

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from tests.support.backends import Backend, backend_for, base_url, dsn
from tests.support.search_index import record_texts
from thoughtledger import open_ledger

pytestmark = pytest.mark.anyio

REDACTED_WORD = "zebrafishsecret"
TEXTS = ["look at the logs", f"paste {REDACTED_WORD} now", "then rotate the key"]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as made:
        yield made


async def gin_pages(backend: Backend) -> bytes:
    """The GIN index's file as the server holds it on disk (after a checkpoint)."""
    connection = await asyncpg.connect(
        dsn(base_url()), server_settings={"search_path": backend.schema}
    )
    try:
        await connection.execute("CHECKPOINT")
        data: bytes = await connection.fetchval(
            "SELECT pg_read_binary_file(pg_relation_filepath('tl_search_doc'))"
        )
    finally:
        await connection.close()
    return data


def fts_structures(path: Path) -> tuple[bytes, set[str]]:
    """SQLite's FTS5 segments (its shadow table's blobs) and the words its vocabulary lists."""
    with sqlite3.connect(path) as db:
        blobs = b"".join(row[0] for row in db.execute("SELECT block FROM tl_search_data"))
        db.execute("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, tl_search, 'row')")
        vocabulary = {row[0] for row in db.execute("SELECT term FROM temp.words")}
    db.close()
    return blobs, vocabulary


async def index_holds_secret(backend: Backend) -> bool:
    if backend.name == "sqlite":
        blobs, vocabulary = fts_structures(backend.sqlite_path)
        assert (REDACTED_WORD in vocabulary) == (REDACTED_WORD.encode() in blobs)
        return REDACTED_WORD in vocabulary
    return REDACTED_WORD.encode() in await gin_pages(backend)


async def test_a_redacted_word_is_no_key_of_the_search_index(backend: Backend) -> None:
    assert backend.url is not None
    async with open_ledger(backend.url) as ledger:
        session = await record_texts(ledger, TEXTS)
    # Closed: every thought was taken into the index, and the probe sees the word there.
    assert await index_holds_secret(backend)

    async with open_ledger(backend.url) as ledger:
        await ledger.redaction.redact(session, thought_number=2, reason="a secret", by="ops")
        assert (await ledger.search(REDACTED_WORD)).results == []
        assert [hit.text for hit in (await ledger.search("logs")).results] == [TEXTS[0]]

    assert not await index_holds_secret(backend)
    async with open_ledger(backend.url, read_only=True) as ledger:
        # The index still answers for every other word (rebuilt, not dropped).
        assert [hit.text for hit in (await ledger.search("rotate")).results] == [TEXTS[2]]
