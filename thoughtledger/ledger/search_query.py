"""A search of the thoughts' texts: the query language, its words, and the same query per backend.

A query is words, all of which a thought must hold::

    cache invalidation          both words, anywhere in the thought
    "cache invalidation"        the phrase: the words in this order, next to each other
    invalid*                    a word that begins with ``invalid``
    cache -redis                ``cache``, and not ``redis`` (``-"a phrase"`` works too)

``OR``, ``AND`` and ``NOT`` written in capitals are refused with a message saying what to write
instead (every word is already required; ``-word`` excludes; for either of two words, search
twice): taken as words they would find nothing, silently.

Words are runs of letters and digits, compared without case (``Don't`` is the phrase ``don t``;
punctuation only separates words). A query needs at least one word to find, not only words to
exclude. The same parsed query is written in SQLite FTS5's syntax (:func:`fts5_query`) and in
PostgreSQL's ``tsquery`` (:func:`tsquery`), and evaluated here for a store without SQL
(:func:`matches`); every backend splits a text into words as :func:`words` does (PostgreSQL's index
is built from the text with punctuation turned into spaces, for the same reason).
"""

import math
import re
from dataclasses import dataclass

from thoughtledger.ledger.errors import InvalidInputError

MAX_QUERY_CHARS = 1000
"""The longest query accepted."""
MAX_TERMS = 32
"""The most words and phrases one query may hold."""

_WORD = re.compile(r"[^\W_]+")
"""A word: a run of letters and digits (``_`` is punctuation, as SQLite's tokenizer has it)."""
_PIECE = re.compile(r'(-?)"([^"]*)"?|(\S+)')
"""A query's pieces: an optionally negated quoted phrase (closed or not), or a bare word."""


_OPERATORS = {
    "OR": "OR is not supported: every word of a query must be in a thought; search once for "
    'each word (or "OR" in quotes, for the word itself)',
    "AND": "AND is not needed: every word of a query must be in a thought already "
    '(write "AND" in quotes for the word itself)',
    "NOT": 'NOT is written -word: "cache -redis" finds cache without redis '
    '(write "NOT" in quotes for the word itself)',
}
"""Operators of other search languages, refused with what to write here instead."""


def words(text: str) -> list[str]:
    """Return the words of ``text``, lower-cased, in order (how every backend splits a text)."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True, slots=True)
class Term:
    """One piece of a query: a word or a phrase, maybe a prefix, maybe excluded.

    Attributes:
        words: The words, in order (one word, or a phrase of several).
        prefix: The last word matches any word it begins.
        negated: A thought holding this term is not found.
    """

    words: tuple[str, ...]
    prefix: bool = False
    negated: bool = False


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A parsed query (see the module docstring); build it with :func:`parse_query`.

    Attributes:
        text: The query as given.
        terms: Its words and phrases, in the order given.
    """

    text: str
    terms: tuple[Term, ...]

    @property
    def wanted(self) -> tuple[Term, ...]:
        """The terms a thought must hold."""
        return tuple(term for term in self.terms if not term.negated)


def parse_query(text: str) -> SearchQuery:
    """Parse a query (see the module docstring).

    Raises:
        InvalidInputError: The query is not a string, is longer than :data:`MAX_QUERY_CHARS`,
            holds more than :data:`MAX_TERMS` terms, or has no word to find.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"a search query is a string, got {type(text).__name__}")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInputError(
            f"a search query has at most {MAX_QUERY_CHARS} characters, got {len(text)}"
        )
    terms: list[Term] = []
    for match in _PIECE.finditer(text):
        negated, phrase, bare = match.groups()
        if bare in _OPERATORS:
            raise InvalidInputError(_OPERATORS[bare])
        if bare is not None:
            negated = "-" if bare.startswith("-") else ""
            phrase = bare[1:] if negated else bare
        prefix = phrase.rstrip().endswith("*")
        found = tuple(words(phrase))
        if found:
            terms.append(Term(found, prefix=prefix, negated=bool(negated)))
    if len(terms) > MAX_TERMS:
        raise InvalidInputError(
            f"a search query holds at most {MAX_TERMS} words and phrases, got {len(terms)}"
        )
    if not any(not term.negated for term in terms):
        raise InvalidInputError(
            f"the query {text!r:.80} has no word to find: give at least one word "
            "(letters or digits) that is not excluded with -"
        )
    return SearchQuery(text, tuple(terms))


def fts5_query(query: SearchQuery) -> str:
    """Return ``query`` in SQLite FTS5's query syntax (every word quoted: no operator injected)."""

    def phrase(term: Term) -> str:
        return '"' + " ".join(term.words) + '"' + ("*" if term.prefix else "")

    wanted = " AND ".join(phrase(term) for term in query.wanted)
    unwanted = "".join(f" NOT {phrase(term)}" for term in query.terms if term.negated)
    return f"({wanted}){unwanted}"


def tsquery(query: SearchQuery) -> str:
    """Return ``query`` as PostgreSQL ``to_tsquery`` text (every word quoted: nothing injected)."""

    def phrase(term: Term) -> str:
        parts = [f"'{word}'" for word in term.words]
        if term.prefix:
            parts[-1] += ":*"
        joined = " <-> ".join(parts)
        return f"!({joined})" if term.negated else f"({joined})"

    return " & ".join(phrase(term) for term in query.terms)


def _holds(tokens: list[str], term: Term) -> int:
    """How many times ``tokens`` hold ``term``'s words in order, next to each other."""
    *lead, last = term.words
    if not lead:  # one word, the common case: counted in C, or one pass of startswith
        if term.prefix:
            return sum(1 for token in tokens if token.startswith(last))
        return tokens.count(last)
    size = len(term.words)
    first = lead[0]
    count = 0
    for at in range(len(tokens) - size + 1):
        if tokens[at] != first:
            continue
        window = tokens[at : at + size]
        if window[:-1] == lead and (
            window[-1].startswith(last) if term.prefix else window[-1] == last
        ):
            count += 1
    return count


def matches(query: SearchQuery, text: str) -> bool:
    """Whether ``text`` holds every wanted term of ``query`` and none of the excluded ones."""
    return matches_words(query, words(text))


def matches_words(query: SearchQuery, tokens: list[str]) -> bool:
    """:func:`matches` for a text already split into its :func:`words`."""
    return all(bool(_holds(tokens, term)) != term.negated for term in query.terms)


def score(query: SearchQuery, text: str, *, found_in: list[int], documents: int) -> float:
    """Return a BM25 score of ``text`` for ``query`` (higher is better), for a store without SQL.

    Args:
        query: The query.
        text: A thought that matches it.
        found_in: For each wanted term, in order, how many of the searched thoughts hold it.
        documents: How many thoughts were searched.
    """
    return score_words(query, words(text), found_in=found_in, documents=documents)


def score_words(
    query: SearchQuery, tokens: list[str], *, found_in: list[int], documents: int
) -> float:
    """:func:`score` for a text already split into its :func:`words`."""
    k1, b, average = 1.2, 0.75, 20.0  # the usual constants; an average thought of ~20 words
    total = 0.0
    for term, holders in zip(query.wanted, found_in, strict=True):
        frequency = _holds(tokens, term)
        idf = math.log(1 + (documents - holders + 0.5) / (holders + 0.5))
        total += idf * frequency * (k1 + 1) / (frequency + k1 * (1 - b + b * len(tokens) / average))
    return total


def term_holds(term: Term, text: str) -> bool:
    """Whether ``text`` holds ``term`` (negation aside)."""
    return holds_words(term, words(text))


def holds_words(term: Term, tokens: list[str]) -> bool:
    """:func:`term_holds` for a text already split into its :func:`words`."""
    return bool(_holds(tokens, term))


SNIPPET_WORDS = 24
"""About how many words of a thought a snippet shows around its first hit."""


@dataclass(frozen=True, slots=True)
class Snippet:
    """A short part of a thought around what the query found, with the hits marked.

    Attributes:
        text: The part shown (``…`` marks text left out at either end).
        highlights: ``(start, end)`` offsets in ``text`` of each word a wanted term matched.
    """

    text: str
    highlights: tuple[tuple[int, int], ...]


def snippet(query: SearchQuery, text: str, *, width: int = SNIPPET_WORDS) -> Snippet:
    """Return the part of ``text`` around the query's first hit, its hits marked.

    The same for every backend: computed from the thought's text, never by the database.
    """
    spans = [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(text)]
    tokens = [token for _, _, token in spans]
    marked: set[int] = set()
    for term in query.wanted:
        size = len(term.words)
        for at in range(len(tokens) - size + 1):
            window = tokens[at : at + size]
            last = window[-1]
            if window[:-1] == list(term.words[:-1]) and (
                last.startswith(term.words[-1]) if term.prefix else last == term.words[-1]
            ):
                marked.update(range(at, at + size))
    first = min(marked, default=0)
    begin = max(0, first - width // 3)
    end = min(len(spans), begin + width)
    start_char = spans[begin][0] if begin > 0 else 0
    end_char = spans[end - 1][1] if end < len(spans) else len(text)
    lead = "…" if start_char > 0 else ""
    shown = lead + text[start_char:end_char] + ("…" if end_char < len(text) else "")
    shift = len(lead) - start_char
    highlights = tuple(
        (spans[index][0] + shift, spans[index][1] + shift)
        for index in sorted(marked)
        if begin <= index < end
    )
    return Snippet(shown, highlights)


__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "SNIPPET_WORDS",
    "SearchQuery",
    "Snippet",
    "Term",
    "fts5_query",
    "holds_words",
    "matches",
    "matches_words",
    "parse_query",
    "score",
    "score_words",
    "snippet",
    "term_holds",
    "tsquery",
    "words",
]
