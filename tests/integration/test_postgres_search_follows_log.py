"""PostgreSQL's search index follows the log in batches, and a search finds every thought at once.

As on SQLite (``test_search_follows_log``): no trigger indexes an append's thoughts in its own
transaction; a thought is found from the moment its append answers, through the index or, while
the index has not taken it in, from the log itself, by a reader that never writes too; a ledger
written before (its insert trigger in place) is upgraded by schema step 13. Thoughts are left
waiting here by taking the newest back out of the index, as a writer that stopped leaves them.
"""

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import asyncpg
import pytest

from tests.support.backends import Backend, backend_for, base_url, dsn
from tests.support.raw_store import raw_store
from tests.support.search_index import record_texts
from thoughtledger import open_ledger
from thoughtledger.ledger.store.schema import DATABASE_SCHEMA_VERSION
from thoughtledger.ledger.store.search_index import SEARCH_INDEX, DialectDDL

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


@pytest.fixture
async def pg(tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for("postgres", tmp_path) as backend:
        yield backend


async def connect(backend: Backend) -> asyncpg.Connection:
    return await asyncpg.connect(dsn(base_url()), server_settings={"search_path": backend.schema})


async def index_state(backend: Backend) -> tuple[int, int]:
    """Where the index stands, and the log's last position."""
    connection = await connect(backend)
    try:
        through = await connection.fetchval("SELECT position FROM tl_search_through")
        end = await connection.fetchval("SELECT max(position) FROM tl_events")
    finally:
        await connection.close()
    return through, end


async def indexed(backend: Backend, word: str) -> list[int]:
    """The thought numbers (versions - 1: each session starts with its start event) the index
    itself holds for ``word``."""
    connection = await connect(backend)
    try:
        rows = await connection.fetch(
            "SELECT e.version FROM tl_search s JOIN tl_events e ON e.position = s.position "
            "WHERE s.doc @@ to_tsquery('simple', $1) ORDER BY e.version",
            word,
        )
    finally:
        await connection.close()
    return [row[0] - 1 for row in rows]


async def caught_up(backend: Backend) -> None:
    """Wait (bounded) until the index has taken in the whole log.

    A catch-up goes as far as the oldest transaction in flight on the server: on a server
    shared with other work, that can take a moment.
    """
    with anyio.fail_after(30):
        while True:
            through, end = await index_state(backend)
            if through == end:
                return
            await anyio.sleep(0.05)


async def take_back_out_of_the_index(backend: Backend, last: int) -> None:
    """Leave the ``last`` events waiting, as a writer that stopped before indexing them."""
    await caught_up(backend)
    connection = await connect(backend)
    try:
        positions = [r[0] for r in await connection.fetch("SELECT position FROM tl_events")]
        low = sorted(positions)[-last - 1]
        await connection.execute("DELETE FROM tl_search WHERE position > $1", low)
        await connection.execute("UPDATE tl_search_through SET position = $1", low)
    finally:
        await connection.close()


async def texts_found(url: str, query: str, *, read_only: bool) -> list[str]:
    async with open_ledger(url, read_only=read_only) as ledger:
        page = await ledger.search(query)
    return [result.text for result in page.results]


async def left_waiting(backend: Backend, template: str, last: int) -> tuple[list[str], str]:
    texts = [template.format(word) for word in WORDS]
    assert backend.url is not None
    async with open_ledger(backend.url) as ledger:
        session = await record_texts(ledger, texts)
    await take_back_out_of_the_index(backend, last)
    return texts, session


async def triggers(backend: Backend) -> list[str]:
    connection = await connect(backend)
    try:
        rows = await connection.fetch(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'tl_events'::regclass "
            "AND NOT tgisinternal ORDER BY tgname"
        )
    finally:
        await connection.close()
    return [row[0] for row in rows]


async def test_no_trigger_indexes_an_append_and_the_index_catches_up_after_appends(
    pg: Backend,
) -> None:
    assert pg.url is not None
    async with open_ledger(pg.url) as ledger:
        await record_texts(ledger, ["golf hotel", "india juliet"])
        assert await triggers(pg) == ["tl_search_stripped"]  # the redaction's, not the append's
        assert [hit.text for hit in (await ledger.search("juliet")).results] == ["india juliet"]
        await caught_up(pg)  # while the ledger is open: the pause after appends
        assert await indexed(pg, "juliet") == [2]


async def test_thoughts_the_index_has_not_taken_in_are_found_by_a_reader_that_never_writes(
    pg: Backend,
) -> None:
    texts, _ = await left_waiting(pg, "{} shared note", 3)
    assert await indexed(pg, "shared") == [1, 2, 3]
    assert pg.url is not None
    assert sorted(await texts_found(pg.url, "shared", read_only=True)) == sorted(texts)
    assert await texts_found(pg.url, "foxtrot", read_only=True) == ["foxtrot shared note"]
    assert await texts_found(pg.url, '"delta shared"', read_only=True) == ["delta shared note"]
    assert (
        await texts_found(pg.url, "shared -echo -alpha", read_only=True)
        == [text for text in texts if not text.startswith(("echo", "alpha"))][::-1]
    )  # equal scores: newest first
    through, end = await index_state(pg)
    assert through < end  # reading took nothing in

    async with open_ledger(pg.url):
        pass  # a writer opens and closes: the index takes in what waited
    await caught_up(pg)
    assert await indexed(pg, "shared") == list(range(1, len(WORDS) + 1))


async def test_a_waiting_thought_redacted_never_enters_the_index(pg: Backend) -> None:
    _, session = await left_waiting(pg, "{} secret plan", 2)
    assert pg.url is not None
    async with open_ledger(pg.url) as ledger:
        await ledger.redaction.redact(session, thought_number=6, reason="leak", by="test")
    await caught_up(pg)
    assert await texts_found(pg.url, "foxtrot", read_only=True) == []
    assert await indexed(pg, "foxtrot") == []
    assert await indexed(pg, "echo") == [5]


async def test_an_imported_session_is_indexed_with_its_import(pg: Backend) -> None:
    assert pg.url is not None
    async with open_ledger("memory://") as source:
        session = await record_texts(source, ["kilo lima", "mike november"])
        exported = await raw_store(source).read_stream(session)
    async with open_ledger(pg.url) as ledger:
        assert await raw_store(ledger).imports.import_records(exported) == 3
        assert await indexed(pg, "november") == [2]
        assert [hit.text for hit in (await ledger.search("kilo")).results] == ["kilo lima"]


async def test_opening_a_ledger_indexed_by_its_insert_trigger_drops_the_trigger(
    pg: Backend,
) -> None:
    """A ledger at schema 12, its insert trigger indexing every append, is upgraded in place."""
    assert pg.url is not None
    async with open_ledger(pg.url) as ledger:
        await record_texts(ledger, ["oscar papa", "quebec romeo"])
    connection = await connect(pg)
    try:
        # Back to schema 12, as a release before step 13 left it.
        for ddl in SEARCH_INDEX:
            assert isinstance(ddl, DialectDDL)
            if "tl_search_added" in ddl.postgresql:
                await connection.execute(ddl.postgresql)
        await connection.execute("DROP TABLE tl_search_through")
        await connection.execute("DELETE FROM tl_schema WHERE version > 12")
        assert await triggers(pg) == ["tl_search_added", "tl_search_stripped"]
        # Written by that release: indexed by the trigger in the append's transaction.
        await connection.execute(
            "INSERT INTO tl_events SELECT position + 1, session_id, version + 1, "
            "'00000000-0000-7000-8000-000000000001', recorded_at, schema_version, event_type, "
            "replace(payload, 'quebec romeo', 'sierra tango'), prev_hash, hash "
            "FROM tl_events WHERE position = (SELECT max(position) FROM tl_events)"
        )
    finally:
        await connection.close()
    assert await indexed(pg, "tango") == [3]

    async with open_ledger(pg.url) as ledger:
        assert await triggers(pg) == ["tl_search_stripped"]
        through, end = await index_state(pg)
        assert through == end  # what the trigger indexed is not indexed again
        await record_texts(ledger, ["uniform victor"])
        assert [hit.text for hit in (await ledger.search("victor")).results] == ["uniform victor"]
        assert [hit.text for hit in (await ledger.search("tango")).results] == ["sierra tango"]
    await caught_up(pg)
    assert await indexed(pg, "victor") == [1]
    connection = await connect(pg)
    try:
        version = await connection.fetchval("SELECT max(version) FROM tl_schema")
        assert version == DATABASE_SCHEMA_VERSION
        assert await connection.fetchval("SELECT to_regproc('tl_search_added')") is None
    finally:
        await connection.close()


async def test_a_payload_changed_by_hand_while_a_catch_up_indexes_it_keeps_its_new_words(
    pg: Backend,
) -> None:
    """An update that does not take the index's turn meets a catch-up indexing the same thought.

    The catch-up's row commits between the trigger's delete and its insert: the update replaces
    it (schema step 20) instead of failing on the index's key.
    """
    await left_waiting(pg, "{} hidden note", 1)
    catch_up, by_hand = await connect(pg), await connect(pg)
    try:
        position = await catch_up.fetchval("SELECT max(position) FROM tl_events")
        indexing = catch_up.transaction()
        await indexing.start()
        await catch_up.execute(
            "INSERT INTO tl_search (position, doc) "
            "VALUES ($1, to_tsvector('simple', 'foxtrot hidden note'))",
            position,
        )
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(
                by_hand.execute,
                "UPDATE tl_events SET payload = replace(payload, 'foxtrot', 'zulu') "
                "WHERE position = $1",
                position,
            )
            with anyio.fail_after(30):  # the update's insert waits on the catch-up's row
                while True:  # polls the server: no event of ours to wait on
                    if await catch_up.fetchval(
                        "SELECT count(*) FROM pg_locks WHERE pid = $1 AND NOT granted",
                        by_hand.get_server_pid(),
                    ):
                        break
                    await anyio.sleep(0.02)
            await indexing.commit()
    finally:
        await catch_up.close()
        await by_hand.close()
    assert await indexed(pg, "zulu") == [6]
    assert await indexed(pg, "foxtrot") == []
