"""Searching every session's thoughts: ``ledger.search(...)``, pages of ranked hits with snippets.

The query language is :mod:`thoughtledger.ledger.search_query`'s; the index is the store's (see
:mod:`thoughtledger.ledger.store.search`). A principal finds only what it may read: an auditor
every session, anyone else the sessions it started; no principal (the ledger's own user) finds
everything. A hit names the thought at its version, the address it is read at ever after.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from thoughtledger.api.access import Principal, allowed
from thoughtledger.api.turns import Turns
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import ThoughtEvent
from thoughtledger.ledger.search_query import Snippet, parse_query, snippet
from thoughtledger.ledger.store.search import SearchFilter, Searching

DEFAULT_SEARCH_PAGE = 20
"""Hits per page unless asked otherwise."""
MAX_SEARCH_PAGE = 100
"""The most hits one page holds."""
_NOTHING = "\x00nothing"
"""An owner no session has: what a principal that may read nothing searches under."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One thought a search found.

    Attributes:
        session_id: Its session.
        version: The version of the event that recorded it (the thought as it was then).
        thought_number: Its number in the session.
        kind: The type of the event that carries it (``thought.recorded``...).
        recorded_at: When it was recorded.
        text: The whole thought.
        snippet: The part around what the query found, the hits marked.
        score: How well it matched (higher is better; comparable within one search only).
    """

    session_id: str
    version: int
    thought_number: int
    kind: str
    recorded_at: datetime
    text: str
    snippet: Snippet
    score: float


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of a search: its hits, best first, and the cursor of the next page, if any."""

    results: list[SearchResult]
    next_cursor: str | None

    def as_json(self, *, whole: bool = True) -> dict[str, Any]:
        """Return the page as JSON-ready data with camelCase keys (the CLI's and MCP's form).

        Args:
            whole: Whether each hit carries its whole thought (``thought``) beside the snippet.
        """
        return {
            "results": [
                {
                    "sessionId": result.session_id,
                    "version": result.version,
                    "thoughtNumber": result.thought_number,
                    "kind": result.kind,
                    "recordedAt": format_time(result.recorded_at),
                    "score": result.score,
                    **({"thought": result.text} if whole else {}),
                    "snippet": result.snippet.text,
                    "highlights": [list(span) for span in result.snippet.highlights],
                }
                for result in self.results
            ],
            "nextCursor": self.next_cursor,
        }


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isascii() or not cursor.isdigit() or len(cursor) > 9:
        raise InvalidInputError(
            f"{cursor!r:.40} is not a search cursor (give the one a page named)"
        )
    return int(cursor)


class Searcher:
    """Full-text search over a ledger's thoughts (``Ledger.search`` carries it out).

    Args:
        index: The search index over the log's thoughts.
    """

    def __init__(self, index: Searching) -> None:
        self._index = index
        self._turns = Turns()

    async def search(
        self,
        query: str,
        *,
        principal: Principal | None = None,
        session_id: str | None = None,
        agent: str | None = None,
        client: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = DEFAULT_SEARCH_PAGE,
        cursor: str | None = None,
    ) -> SearchPage:
        """Find thoughts of every session by their words: one page, best match first.

        ``query`` holds words a thought must all contain, ``"phrases"``, ``prefix*`` words
        and ``-excluded`` words or phrases (see :mod:`thoughtledger.ledger.search_query`). The
        store's full-text index answers it (never a scan on SQLite or PostgreSQL).

        Args:
            query: What to find.
            principal: Who asks: an auditor finds every session's thoughts, anyone else those
                of the sessions it started; ``None`` (the ledger's own user) finds all.
            session_id: Only this session's thoughts.
            agent: Only sessions of this agent.
            client: Only sessions of this client software.
            since: Only thoughts recorded at or after this (aware) time.
            until: Only thoughts recorded before this (aware) time.
            limit: Hits per page (1 to 100).
            cursor: The ``next_cursor`` of the page before; ``None`` for the first page.

        Raises:
            InvalidInputError: A query with no word to find (or too long), a bad page size,
                cursor or session id.
            StoreError: The store failed, or (opened read-only) the ledger predates the index.
        """
        parsed = parse_query(query)
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 1 <= limit <= MAX_SEARCH_PAGE
        ):
            raise InvalidInputError(
                f"a search page holds 1 to {MAX_SEARCH_PAGE} hits, got {limit!r}"
            )
        offset = _offset(cursor)
        owner = None
        if principal is not None and not allowed(principal, "read_all", None):
            owner = principal.name or _NOTHING
        where = SearchFilter(
            session_id=session_id, owner=owner, agent=agent, client=client, since=since, until=until
        )
        # A principal's searches take turns (see thoughtledger.api.turns): its flood waits on
        # itself, not on everyone.
        async with self._turns.of(principal.name if principal is not None else None):
            hits = await self._index.search(parsed, where, limit=limit + 1, offset=offset)
        results = []
        for hit in hits[:limit]:
            event = hit.record.event
            assert isinstance(event, ThoughtEvent)  # noqa: S101  # the index holds thoughts only
            results.append(
                SearchResult(
                    session_id=hit.record.session_id,
                    version=hit.record.version,
                    thought_number=event.thought_number,
                    kind=hit.record.event_type,
                    recorded_at=hit.record.recorded_at,
                    text=event.thought,
                    snippet=snippet(parsed, event.thought),
                    score=hit.score,
                )
            )
        more = len(hits) > limit
        return SearchPage(results, str(offset + limit) if more else None)


__all__ = ["DEFAULT_SEARCH_PAGE", "MAX_SEARCH_PAGE", "SearchPage", "SearchResult", "Searcher"]
