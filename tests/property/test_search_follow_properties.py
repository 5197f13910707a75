"""However far the search index lags the log (SQLite, PostgreSQL), a search finds exactly what it
finds once the index has taken every thought in, and what the store without SQL finds."""

import asyncio
import tempfile
import uuid
from pathlib import Path

import asyncpg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.backends import dsn, pg_url
from tests.support.cli import sqlite_url
from tests.support.search_index import index_state, record_texts, take_back_out_of_the_index
from thoughtledger import Ledger, open_ledger
from thoughtledger.ledger.store.memory import MemoryEventStore

# Few words, so that most queries find something; case, accents, digits and punctuation vary.
_VOCABULARY = ["cache", "Cache", "caches", "redis", "état", "ÉTAT", "42", "x1", "plan"]
_texts = st.lists(
    st.lists(st.sampled_from([*_VOCABULARY, ",", "-", "'s"]), min_size=1, max_size=8).map(" ".join),
    min_size=1,
    max_size=25,
)
_term = st.sampled_from(
    ["cache", "caches", "redis", "état", "42", "x1", "plan", "ca*", '"cache redis"']
)
_queries = st.tuples(_term, st.none() | _term, st.none() | _term).map(
    lambda parts: " ".join(
        [parts[0], *(p for p in parts[1:2] if p), *(f"-{p}" for p in parts[2:] if p)]
    )
)


async def _found(ledger: Ledger, query: str) -> set[int]:
    return {result.version for result in (await ledger.search(query, limit=100)).results}


async def _expected(texts: list[str], query: str) -> set[int]:
    reference = Ledger(MemoryEventStore())
    try:
        await record_texts(reference, texts)
        return await _found(reference, query)
    finally:
        await reference.aclose()


async def _run(texts: list[str], waiting: int, query: str) -> None:
    expected = await _expected(texts, query)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.db"
        url = sqlite_url(path)
        async with open_ledger(url) as ledger:
            await record_texts(ledger, texts)
        take_back_out_of_the_index(path, min(waiting, len(texts)))
        async with open_ledger(url, read_only=True) as ledger:
            assert await _found(ledger, query) == expected
        async with open_ledger(url) as ledger:
            pass  # a writer opens and closes: the index takes in what waited
        through, end = index_state(path)
        assert through == end
        async with open_ledger(url, read_only=True) as ledger:
            assert await _found(ledger, query) == expected


@settings(max_examples=25, deadline=None)
@given(texts=_texts, waiting=st.integers(0, 30), query=_queries)
def test_a_lagging_index_finds_what_the_complete_one_and_the_memory_store_find(
    texts: list[str], waiting: int, query: str
) -> None:
    asyncio.run(_run(texts, waiting, query))


async def _run_postgres(base: str, texts: list[str], waiting: int, query: str) -> None:
    expected = await _expected(texts, query)
    schema = f"tl_prop_{uuid.uuid4().hex[:12]}"
    url = f"{base}?schema={schema}"
    connection = await asyncpg.connect(dsn(base), server_settings={"search_path": schema})
    try:
        async with open_ledger(url) as ledger:
            await record_texts(ledger, texts)
        # As a writer that stopped leaves it: the newest events wait for the index.
        low = await connection.fetchval(
            "SELECT coalesce(min(position) - 1, 0) FROM (SELECT position FROM tl_events "
            "ORDER BY position DESC LIMIT $1) AS newest",
            min(waiting, len(texts)),
        )
        low = low if waiting else await connection.fetchval("SELECT max(position) FROM tl_events")
        await connection.execute("DELETE FROM tl_search WHERE position > $1", low)
        await connection.execute("UPDATE tl_search_through SET position = $1", low)
        async with open_ledger(url, read_only=True) as ledger:
            assert await _found(ledger, query) == expected
        async with open_ledger(url) as ledger:
            pass  # a writer opens and closes: the index takes in what waited
        async with open_ledger(url, read_only=True) as ledger:
            assert await _found(ledger, query) == expected
    finally:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await connection.close()


@pytest.mark.postgres
@settings(max_examples=10, deadline=None)
@given(texts=_texts, waiting=st.integers(0, 30), query=_queries)
def test_a_lagging_postgres_index_finds_what_the_memory_store_finds(
    texts: list[str], waiting: int, query: str
) -> None:
    base = pg_url()
    if base is None:
        pytest.skip("no PostgreSQL configured (set THOUGHTLEDGER_TEST_PG_URL)")
    asyncio.run(_run_postgres(base, texts, waiting, query))
