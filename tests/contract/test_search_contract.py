"""Search on every backend: the query language, ranking, filters, paging, access and redaction."""

from datetime import UTC, datetime, timedelta

import pytest

from tests.support.backends import Backend
from thoughtledger import Ledger
from thoughtledger.api.access import Principal
from thoughtledger.ledger.errors import InvalidInputError

pytestmark = pytest.mark.anyio

TEXTS = [
    "the cache invalidation is hard",
    "cache, cache and more caches everywhere",
    "nothing to see here",
    "redis cache in front of the database",
    "invalidation of the session tokens",
]


async def record(
    ledger: Ledger, texts: list[str], *, owner: str | None = None, agent: str = "a"
) -> str:
    session_id: str | None = None
    for number, text in enumerate(texts, start=1):
        outcome = await ledger.think(
            session_id,
            {
                "thought": text,
                "thought_number": number,
                "total_thoughts": len(texts),
                "next_thought_needed": number < len(texts),
            },
            owner=owner,
            metadata={"agent": agent},
        )
        session_id = outcome.session_id
    assert session_id is not None
    return session_id


async def found(ledger: Ledger, query: str, **options: object) -> list[str]:
    page = await ledger.search(query, **options)  # type: ignore[arg-type]  # filters under test
    return [result.text for result in page.results]


async def test_words_phrases_prefixes_and_exclusions_find_the_same_thoughts(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        await record(ledger, TEXTS)
        assert set(await found(ledger, "cache")) == {TEXTS[0], TEXTS[1], TEXTS[3]}
        assert set(await found(ledger, "CACHE database")) == {TEXTS[3]}
        assert await found(ledger, '"cache invalidation"') == [TEXTS[0]]
        assert await found(ledger, '"invalidation cache"') == []
        assert set(await found(ledger, "invalid*")) == {TEXTS[0], TEXTS[4]}
        assert set(await found(ledger, "cache -redis")) == {TEXTS[0], TEXTS[1]}
        assert set(await found(ledger, 'cache -"more caches"')) == {TEXTS[0], TEXTS[3]}
        assert await found(ledger, "absent") == []
    finally:
        await ledger.aclose()


async def test_a_thought_holding_the_word_more_often_ranks_first_with_its_hits_marked(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await record(ledger, [*TEXTS, "unrelated words only", "more filler text"])
        page = await ledger.search("cache")
        best = page.results[0]
        assert best.text == TEXTS[1]
        assert (best.session_id, best.version, best.thought_number) == (session_id, 3, 2)
        assert best.score >= page.results[-1].score
        marked = [best.snippet.text[start:end] for start, end in best.snippet.highlights]
        assert marked == ["cache", "cache", "caches"] or marked == ["cache", "cache"]
    finally:
        await ledger.aclose()


async def test_pages_cover_every_hit_once(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        await record(ledger, [f"step {n} of the migration" for n in range(1, 8)])
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page = await ledger.search("migration", limit=3, cursor=cursor)
            seen.extend(result.text for result in page.results)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert sorted(seen) == sorted(f"step {n} of the migration" for n in range(1, 8))
    finally:
        await ledger.aclose()


async def test_filters_by_session_agent_and_time(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        first = await record(ledger, ["alpha plan"], agent="planner")
        await record(ledger, ["alpha review"], agent="reviewer")
        assert await found(ledger, "alpha", session_id=first) == ["alpha plan"]
        assert await found(ledger, "alpha", agent="reviewer") == ["alpha review"]
        later = datetime.now(UTC) + timedelta(days=1)
        assert await found(ledger, "alpha", since=later) == []
        assert len(await found(ledger, "alpha", until=later)) == 2
    finally:
        await ledger.aclose()


async def test_a_principal_finds_only_what_it_may_read(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        await record(ledger, ["shared secret word"], owner="alice")
        await record(ledger, ["another secret word"], owner="bob")
        await record(ledger, ["unowned secret word"])
        alice = Principal("alice", "writer")
        assert await found(ledger, "secret", principal=alice) == ["shared secret word"]
        assert await found(ledger, "secret", principal=Principal("carol", "reader")) == []
        assert len(await found(ledger, "secret", principal=Principal("x", "auditor"))) == 3
        assert len(await found(ledger, "secret")) == 3
    finally:
        await ledger.aclose()


async def test_a_redacted_thought_is_no_longer_found(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await record(ledger, ["look at the logs", "paste zebrafishsecret now"])
        assert await found(ledger, "zebrafishsecret") == ["paste zebrafishsecret now"]
        await ledger.redaction.redact(session_id, thought_number=2, reason="a secret", by="ops")
        assert await found(ledger, "zebrafishsecret") == []
        assert await found(ledger, "logs") == ["look at the logs"]
    finally:
        await ledger.aclose()
    if backend.name == "sqlite":
        # The index's pages on disk keep no trace of the word (nor does the log's).
        for path in backend.tmp.glob("ledger.db*"):
            assert b"zebrafishsecret" not in path.read_bytes()


@pytest.mark.parametrize("query", ["", "-only", '-"a phrase"', "   ", "x" * 1001])
async def test_a_query_with_nothing_to_find_is_refused(backend: Backend, query: str) -> None:
    ledger = Ledger(await backend.open())
    try:
        with pytest.raises(InvalidInputError):
            await ledger.search(query)
        with pytest.raises(InvalidInputError):
            await ledger.search("word", cursor="not-a-cursor")
    finally:
        await ledger.aclose()


async def test_odd_text_is_appended_and_found(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    odd = ["nul\x00inside word", "a literal \\u0000 escape word", 'quotes " and \\ word']
    try:
        await record(ledger, odd)
        assert sorted(await found(ledger, "word")) == sorted(odd)
        assert await found(ledger, "inside") == [odd[0]]
    finally:
        await ledger.aclose()
