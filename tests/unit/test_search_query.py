"""The query language: what a query means, written for FTS5 and tsquery, and the snippet."""

import pytest

from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.search_query import (
    MAX_TERMS,
    Term,
    fts5_query,
    matches,
    parse_query,
    snippet,
    tsquery,
)


def test_words_phrases_prefixes_and_exclusions_parse_into_terms() -> None:
    query = parse_query('Cache "read  Replica" invalid* -redis -"hot path" don\'t')
    assert query.terms == (
        Term(("cache",)),
        Term(("read", "replica")),
        Term(("invalid",), prefix=True),
        Term(("redis",), negated=True),
        Term(("hot", "path"), negated=True),
        Term(("don", "t")),
    )


def test_an_unclosed_quote_is_a_phrase_to_the_end_and_punctuation_only_separates() -> None:
    assert parse_query('"open phrase').terms == (Term(("open", "phrase")),)
    assert parse_query("a-b_c").terms == (Term(("a", "b", "c")),)


def test_every_word_is_quoted_so_no_operator_of_either_backend_can_be_injected() -> None:
    query = parse_query("NOT OR AND near* -x")
    assert fts5_query(query) == '("not" AND "or" AND "and" AND "near"*) NOT "x"'
    assert tsquery(query) == "('not') & ('or') & ('and') & ('near':*) & !('x')"


@pytest.mark.parametrize("text", ["", "  ", "-a", '-"a b"', "!!!", "x" * 1001])
def test_a_query_with_nothing_to_find_or_too_long_is_refused(text: str) -> None:
    with pytest.raises(InvalidInputError):
        parse_query(text)


def test_too_many_terms_are_refused() -> None:
    with pytest.raises(InvalidInputError, match=str(MAX_TERMS)):
        parse_query(" ".join(f"w{n}" for n in range(MAX_TERMS + 1)))


def test_matching_follows_words_phrases_prefixes_and_exclusions() -> None:
    text = "The read replica takes the report; caching later."
    assert matches(parse_query('"read replica" cach*'), text)
    assert not matches(parse_query('"replica read"'), text)
    assert not matches(parse_query("replica -report"), text)
    assert not matches(parse_query("cache"), text)


def test_a_snippet_marks_each_hit_around_the_first_one() -> None:
    text = " ".join(f"w{n}" for n in range(100)) + " the read replica here"
    cut = snippet(parse_query('"read replica"'), text, width=10)
    assert cut.text.startswith("…")
    assert [cut.text[start:end] for start, end in cut.highlights] == ["read", "replica"]
