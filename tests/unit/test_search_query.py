"""The query language: what a query means, written for FTS5 and tsquery, and the snippet."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.search_query import (
    MAX_TERMS,
    SearchQuery,
    Term,
    fts5_query,
    holds_words,
    matches,
    matches_words,
    parse_query,
    score_words,
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
    query = parse_query('"NOT" or "AND" near* -x')
    assert fts5_query(query) == '("not" AND "or" AND "and" AND "near"*) NOT "x"'
    assert tsquery(query) == "('not') & ('or') & ('and') & ('near':*) & !('x')"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("replica OR index", "OR is not supported: every word of a query must be in a thought"),
        ("replica AND index", "AND is not needed"),
        ("cache NOT redis", "NOT is written -word"),
    ],
)
def test_another_language_s_operators_are_refused_saying_what_to_write(
    text: str, said: str
) -> None:
    # Taken as words they would find nothing and say nothing; quoted, they are words.
    with pytest.raises(InvalidInputError, match=said):
        parse_query(text)
    assert parse_query(text.replace(text.split()[1], f'"{text.split()[1]}"')).terms[1] == Term(
        (text.split()[1].lower(),)
    )


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


def _naive_count(tokens: list[str], term: Term) -> int:
    """Every window of the term's size compared whole: the definition the fast count keeps."""
    size = len(term.words)
    found = 0
    for at in range(len(tokens) - size + 1):
        window = tokens[at : at + size]
        last = window[-1]
        if window[:-1] == list(term.words[:-1]) and (
            last.startswith(term.words[-1]) if term.prefix else last == term.words[-1]
        ):
            found += 1
    return found


_token = st.sampled_from(["a", "ab", "abc", "b", "ba"])


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(_token, max_size=12),
    words=st.lists(_token, min_size=1, max_size=3),
    prefix=st.booleans(),
)
def test_a_term_is_counted_as_every_window_compared_whole_counts_it(
    tokens: list[str], words: list[str], prefix: bool
) -> None:
    term = Term(tuple(words), prefix=prefix)
    expected = _naive_count(tokens, term)
    assert holds_words(term, tokens) == (expected > 0)
    query = SearchQuery(" ".join(words), (term,))
    assert matches_words(query, tokens) == (expected > 0)
    # BM25 of the expected count, as score_words computes it (k1 1.2, b 0.75, 20 words).
    weight = math.log(1 + 1.5 / 1.5) * 2.2 / (expected + 1.2 * (0.25 + 0.75 * len(tokens) / 20))
    assert score_words(query, tokens, found_in=[1], documents=2) == pytest.approx(expected * weight)
