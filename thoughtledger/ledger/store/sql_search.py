"""The search of the SQL backends: its filters as SQL, and the thoughts not yet indexed.

The thoughts the index has not taken in yet (see
:mod:`thoughtledger.ledger.store.sqlite.search_follow` and
:mod:`thoughtledger.ledger.store.postgres.search_follow`) are read from the log and matched here,
before the index is read: a catch-up in between then shows a thought twice (kept once), never
not at all. The statements are SQL text with every value bound (see
:mod:`thoughtledger.ledger.store.search_text`): no SQLAlchemy is imported to run them.
"""

# the SQL joined below is this module's constants; values are bound

import json

from thoughtledger.ledger.errors import StoreError
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.search_query import SearchQuery, fts5_query, tsquery
from thoughtledger.ledger.store.rows import decode_rows
from thoughtledger.ledger.store.search import SearchFilter, SearchHit, best_first, matching_hits
from thoughtledger.ledger.store.search_text import search_statement, waiting_statement
from thoughtledger.ledger.store.sql_stats import FetchSql, StatsDialect


async def search_hits(
    fetch: FetchSql,
    dialect: StatsDialect,
    backend: str,
    query: SearchQuery,
    where: SearchFilter,
    *,
    limit: int,
    offset: int,
    where_text: str,
) -> list[SearchHit]:
    """One page of the thoughts ``query`` finds among those ``where`` selects, best first.

    Args:
        fetch: Runs a statement.
        dialect: The backend's SQL for times and payloads' fields.
        backend: ``sqlite`` or ``postgresql`` (see :func:`search_statement`).
        query: The parsed query.
        where: Which thoughts to look at.
        limit: The page's size (already checked).
        offset: How many of the best hits to skip (already checked).
        where_text: The ledger, as error messages name it.

    Raises:
        InvalidInputError: A malformed session id in ``where``.
        StoreError: The backend failed, or the ledger predates the index (read-only).
    """
    sqlite = backend == "sqlite"
    params: dict[str, object] = {}
    conditions: list[str] = []
    if where.session_id is not None:
        check_id(where.session_id)
        conditions.append("e.session_id = :session_id")
        params["session_id"] = where.session_id
    for name, moment, test in (("since", where.since, ">="), ("until", where.until, "<")):
        if moment is not None:
            conditions.append(f"e.recorded_at {test} :{name}")
            params[name] = dialect.started_bound(moment)
    for name, value, path in (
        ("owner", where.owner, ("owner",)),
        ("agent", where.agent, ("metadata", "agent")),
        ("client", where.client, ("metadata", "client")),
    ):
        if value is not None:
            conditions.append(f"{dialect.json_sql('s.payload', *path)} = :{name}")
            params[name] = value
    waiting = await _waiting_hits(fetch, backend, query, conditions, params)
    params["query"] = fts5_query(query) if sqlite else tsquery(query)
    params["limit"], params["offset"] = (offset + limit, 0) if waiting else (limit, offset)
    if not sqlite:
        params["ranked"] = tsquery(SearchQuery(query.text, query.wanted))
    try:
        rows = await fetch(search_statement(backend, conditions), params)
    except StoreError as exc:
        if "tl_search" in str(exc):
            raise StoreError(
                f"{where_text} has no search index yet (it predates it, and a read-only "
                "opening never upgrades a ledger): open it once for writing, for example "
                "with thoughtledger serve, to build the index"
            ) from exc
        raise
    records = decode_rows(row[:-1] for row in rows)
    hits = [SearchHit(record, float(row[-1])) for record, row in zip(records, rows, strict=True)]
    return best_first([*hits, *waiting], limit=limit, offset=offset) if waiting else hits


async def _waiting_hits(
    fetch: FetchSql,
    backend: str,
    query: SearchQuery,
    conditions: list[str],
    params: dict[str, object],
) -> list[SearchHit]:
    """The hits among the thoughts the index has not taken in yet.

    Raises:
        StoreError: The backend failed.
    """
    try:
        rows = await fetch(waiting_statement(conditions, backend), params)
    except StoreError as exc:
        if "tl_search_through" in str(exc):
            return []  # an older ledger read without upgrading: its trigger indexed all
        raise
    # The text as the index takes it (NULL once redacted): only the rows found are decoded.
    # (PostgreSQL reads it from the payload, e.payload, the row's eighth column.)
    texts = ((row, row[-1] if backend == "sqlite" else payload_text(row[7])) for row in rows)
    found = matching_hits([(row, text) for row, text in texts if text is not None], query)
    records = decode_rows(row[:-1] for row, _ in found)
    return [SearchHit(record, score) for record, (_, score) in zip(records, found, strict=True)]


def payload_text(payload: str) -> str | None:
    """The text PostgreSQL's index takes from a stored thought's payload (``None``: redacted).

    As :data:`~thoughtledger.ledger.store.search_text.PG_TEXT` reads it: the content's thought
    (payload schema 2), else the thought at the top (schema 1), a U+0000 read as a space; a
    payload that is not JSON (damaged outside the ledger) has none.
    """
    try:
        data = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    content = data.get("content")
    text = content.get("thought") if isinstance(content, dict) else None
    if text is None:
        text = data.get("thought")
    if text is None:
        return None
    if not isinstance(text, str):
        text = json.dumps(text)
    return text.replace("\x00", " ")


__all__ = ["payload_text", "search_hits"]
