"""Searching the thoughts of every session (a store capability), and its answer without SQL.

The SQL backends keep a full-text index beside the log (schema step 9, see
:mod:`thoughtledger.ledger.store.search_index`): SQLite's FTS5 ranked by ``bm25`` (filled in
batches after the appends; the thoughts it has not taken in yet are matched here,
:func:`matching_hits`), PostgreSQL's ``tsvector`` under a GIN index ranked by
``ts_rank``. A redacted thought's text leaves the index with its payload. The in-memory store
answers the same query by evaluating it over its events (:func:`search_records`).

A hit is a thought event: its session, its version (the address of the thought as it was then),
its text and a score, higher for a better match; hits come best first, ties newest first.
"""

from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol, TypeVar, runtime_checkable

from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import SessionStarted, ThoughtEvent
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.search_query import (
    SearchQuery,
    holds_words,
    matches_words,
    score_words,
    words,
)

_Item = TypeVar("_Item")

MAX_SEARCH_PAGE = 1000
"""The most hits one read of the index returns."""


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """Which thoughts a search looks at (every condition given must hold).

    Attributes:
        session_id: Only this session's thoughts.
        owner: Only the sessions this principal started (what a principal may read).
        agent: Only sessions of this agent (``session.started``'s ``metadata``).
        client: Only sessions of this client software.
        since: Only thoughts recorded at or after this time.
        until: Only thoughts recorded before this time.
    """

    session_id: str | None = None
    owner: str | None = None
    agent: str | None = None
    client: str | None = None
    since: datetime | None = None
    until: datetime | None = None


class SearchHit(NamedTuple):
    """One thought a search found: the event that carries it, and how well it matched."""

    record: RecordedEvent
    score: float


def check_search_page(limit: int, offset: int) -> None:
    """Validate a page of a search.

    Raises:
        InvalidInputError: ``limit`` is not in 1..:data:`MAX_SEARCH_PAGE`, or ``offset`` < 0.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_PAGE:
        raise InvalidInputError(f"a search page holds 1 to {MAX_SEARCH_PAGE} hits, got {limit!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInputError(f"a search offset is an integer >= 0, got {offset!r}")


@runtime_checkable
class Searching(Protocol):
    """Full-text search over every session's thoughts (a store capability)."""

    @abstractmethod
    async def search(
        self,
        query: SearchQuery,
        where: SearchFilter | None = None,
        *,
        limit: int = 20,
        offset: int = 0,
    ) -> list[SearchHit]:
        """Return one page of the thoughts ``query`` finds among those ``where`` selects.

        Best first (ties: newest first); a redacted thought is never found.

        Args:
            query: The parsed query (see :func:`thoughtledger.ledger.search_query.parse_query`).
            where: Which thoughts to look at; ``None``: all of them.
            limit: The most hits to return (1 to :data:`MAX_SEARCH_PAGE`).
            offset: How many of the best hits to skip (the pages before).

        Raises:
            InvalidInputError: A bad page.
            StoreError: The backend failed, or (opened read-only) the ledger predates the index.
        """


class RecordsSearch(Searching):
    """Search evaluated over sessions' events held in memory (the in-memory store's ``search``).

    Args:
        streams: Every session's events by session id, read afresh by each search.
        check_open: Raises :class:`~thoughtledger.ledger.errors.StoreError` once the store
            holding ``streams`` is closed.
    """

    def __init__(
        self, streams: Mapping[str, Sequence[RecordedEvent]], check_open: Callable[[], None]
    ) -> None:
        self._streams = streams
        self._check_open = check_open

    async def search(
        self,
        query: SearchQuery,
        where: SearchFilter | None = None,
        *,
        limit: int = 20,
        offset: int = 0,
    ) -> list[SearchHit]:
        """See :meth:`Searching.search` (the query evaluated over every session's events)."""
        self._check_open()
        check_search_page(limit, offset)
        where = where or SearchFilter()
        if where.session_id is not None:
            check_id(where.session_id)
        return search_records(self._streams.values(), query, where, limit=limit, offset=offset)


def search_records(
    streams: Iterable[Sequence[RecordedEvent]],
    query: SearchQuery,
    where: SearchFilter,
    *,
    limit: int,
    offset: int,
) -> list[SearchHit]:
    """Answer a search by evaluating it over every session's events (a store without an index)."""
    selected: list[tuple[RecordedEvent, str]] = []
    for stream in streams:
        if not stream or not _session_wanted(stream[0].event, stream[0].session_id, where):
            continue
        for record in stream:
            text = thought_text(record)
            if text is None:
                continue
            if where.since is not None and record.recorded_at < where.since:
                continue
            if where.until is not None and record.recorded_at >= where.until:
                continue
            selected.append((record, text))
    hits = [SearchHit(record, found) for record, found in matching_hits(selected, query)]
    return best_first(hits, limit=limit, offset=offset)


def thought_text(record: RecordedEvent) -> str | None:
    """The text a search looks at in ``record``: a thought's, unless redacted."""
    event = record.event
    if not isinstance(event, ThoughtEvent) or event.redacted:
        return None
    return event.thought


def matching_hits(
    selected: Sequence[tuple[_Item, str]], query: SearchQuery
) -> list[tuple[_Item, float]]:
    """The items among ``selected`` (each with its text) that ``query`` finds, with their scores.

    The score is :func:`~thoughtledger.ledger.search_query.score`'s BM25, its document
    frequencies counted over ``selected``; each text is split into words once.
    """
    split = [(item, words(text)) for item, text in selected]
    found_in = [sum(holds_words(term, tokens) for _, tokens in split) for term in query.wanted]
    return [
        (item, score_words(query, tokens, found_in=found_in, documents=len(split)))
        for item, tokens in split
        if matches_words(query, tokens)
    ]


def best_first(hits: Iterable[SearchHit], *, limit: int, offset: int) -> list[SearchHit]:
    """One page of ``hits`` (one per event), best first, ties newest first."""
    unique = {hit.record.position: hit for hit in hits}
    ranked = sorted(unique.values(), key=lambda hit: (-hit.score, -hit.record.position))
    return ranked[offset : offset + limit]


def _session_wanted(first: object, session_id: str, where: SearchFilter) -> bool:
    if where.session_id is not None and session_id != where.session_id:
        return False
    started = first if isinstance(first, SessionStarted) else SessionStarted()
    return (
        (where.owner is None or started.owner == where.owner)
        and (where.agent is None or started.metadata.get("agent") == where.agent)
        and (where.client is None or started.metadata.get("client") == where.client)
    )


__all__ = [
    "MAX_SEARCH_PAGE",
    "RecordsSearch",
    "SearchFilter",
    "SearchHit",
    "Searching",
    "best_first",
    "check_search_page",
    "matching_hits",
    "search_records",
    "thought_text",
]
