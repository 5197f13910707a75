"""The browser view's search: ``/api/search``, one page of hits as the page's script draws them.

The same search as ``thoughtledger search`` (:meth:`thoughtledger.api.Ledger.search`): a principal
finds only what it may read. Each hit carries the address of the thought at its version
(``/sessions/ID?v=VERSION``), which opens the session's page there and can be shared.
"""

from datetime import datetime
from typing import Any
from urllib.parse import quote

from thoughtledger.api import Scope, SearchPage
from thoughtledger.ledger.envelope import format_time


async def search_json(
    scope: Scope,
    query: str,
    *,
    agent: str | None,
    client: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    cursor: str | None,
) -> dict[str, Any]:
    """One page of hits, as JSON.

    Raises:
        InvalidInputError: A query with nothing to find, a bad page size or cursor.
        StoreError: The store failed.
    """
    page = await scope.search(
        query,
        agent=agent,
        client=client,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
    )
    return _as_json(page)


def _as_json(page: SearchPage) -> dict[str, Any]:
    return {
        "results": [
            {
                "sessionId": hit.session_id,
                "version": hit.version,
                "thoughtNumber": hit.thought_number,
                "kind": hit.kind,
                "recordedAt": format_time(hit.recorded_at),
                "snippet": hit.snippet.text,
                "highlights": [list(span) for span in hit.snippet.highlights],
                "href": f"/sessions/{quote(hit.session_id, safe='')}?v={hit.version}",
            }
            for hit in page.results
        ],
        "next": page.next_cursor,
    }


__all__ = ["search_json"]
