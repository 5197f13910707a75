"""The SQL of search as text: a thought's text read out of a stored payload, and the searches.

No SQLAlchemy: serving and a reading command use it. The text is shared by the schema's search
index (:mod:`thoughtledger.ledger.store.search_index`) and the SQLite writer that brings that
index up to the log's end (:mod:`thoughtledger.ledger.store.sqlite.search_follow`); the searches
(:func:`search_statement`, :func:`waiting_statement`) are run by
:mod:`thoughtledger.ledger.store.sql_search`.
"""

# ruff: noqa: S608  # every piece joined below is a constant of this module: no input reaches it

from thoughtledger.ledger.events import THOUGHT_TYPES

THOUGHT_TYPES_SQL = ", ".join(f"'{kind}'" for kind in sorted(THOUGHT_TYPES))
"""The thought events' types, as an SQL list (constants of ours: nothing from outside)."""


def sqlite_text(payload: str) -> str:
    """Return SQLite's expression for the thought's text in ``payload`` (NULL once redacted).

    Args:
        payload: The SQL expression of the payload (a column, or a trigger's ``new.payload``).
    """
    # Payload schema 2 keeps the text in its content member (gone once redacted); schema 1 at
    # the top.
    # json_extract ends a text at a U+0000: a payload that escapes one is read with a space
    # there (escaped backslashes set aside first, as for PostgreSQL).
    json = (
        rf"(CASE WHEN instr({payload}, '\u0000') = 0 THEN {payload} ELSE replace(replace(replace("
        rf"{payload}, '\\', char(1)), '\u0000', '\u0020'), char(1), '\\') END)"
    )
    return f"coalesce(json_extract({json}, '$.content.thought'), json_extract({json}, '$.thought'))"


SQLITE_ADD = (
    "INSERT INTO tl_search(rowid, text) SELECT {position}, t FROM "
    "(SELECT " + sqlite_text("{payload}") + " AS t) WHERE t IS NOT NULL"
)
"""Index one thought (``{position}`` and ``{payload}`` to be filled in with SQL expressions)."""

SQLITE_FILL = (
    # A payload that is not JSON is skipped (the verifier reports it; the index must not fail).
    "INSERT INTO tl_search(rowid, text) SELECT position, t FROM (SELECT position, "
    + sqlite_text("payload")
    + " AS t FROM tl_events WHERE position > :low AND position <= :high "
    f"AND event_type IN ({THOUGHT_TYPES_SQL}) AND json_valid(payload)) WHERE t IS NOT NULL"
)
"""Index the thoughts of the log at positions ``:low`` (excluded) to ``:high``."""

PG_DOC = "to_tsvector('simple', regexp_replace({text}, '[[:punct:][:space:]]+', ' ', 'g'))"
"""PostgreSQL's document of a thought's text (``{text}`` an SQL expression): punctuation turned
into spaces, so that a word is a run of letters and digits as on SQLite; no stemming."""
_PG_JSON = (
    r"(CASE WHEN strpos({payload}, '\u0000') = 0 THEN {payload} ELSE replace(replace(replace("
    r"{payload}, '\\', chr(1)), '\u0000', '\u0020'), chr(1), '\\') END)::json"
)
# PostgreSQL cannot give a text holding U+0000 (its escape is refused, failing the append), so a
# payload that escapes one is read with it as a space: escaped backslashes are set aside first
# (chr(1) never occurs raw in JSON), so that only a real \u0000 escape is replaced.
PG_TEXT = "coalesce(" + _PG_JSON + " #>> '{{content,thought}}', " + _PG_JSON + " ->> 'thought')"
"""PostgreSQL's expression for the thought's text in ``{payload}`` (NULL once redacted)."""


def pg_rows(source: str, where: str = "") -> str:
    """Return PostgreSQL's statement indexing the thoughts among the rows of ``source``.

    Args:
        source: A table, or a trigger's new rows.
        where: Conditions on those rows, each followed by ``AND`` (constants of ours).
    """
    return (
        "INSERT INTO tl_search (position, doc) SELECT position, "
        + PG_DOC.format(text="t")
        + " FROM (SELECT position, "
        + PG_TEXT.format(payload="payload")
        + f" AS t FROM {source} WHERE {where}event_type IN ({THOUGHT_TYPES_SQL})) AS texts "
        "WHERE t IS NOT NULL"
    )


_COLUMNS = (
    "e.position, e.session_id, e.version, e.event_id, e.recorded_at, e.schema_version, "
    "e.event_type, e.payload, e.prev_hash, e.hash"
)


def _session_join(conditions: list[str]) -> str:
    """The join to a session's first event (``s``), when a condition names it."""
    if any("s." in condition for condition in conditions):
        return " JOIN tl_events s ON s.session_id = e.session_id AND s.version = 1"
    return ""


def search_statement(dialect: str, conditions: list[str]) -> str:
    """Return the search's ``SELECT`` for ``dialect`` (``sqlite`` or ``postgresql``).

    Its bound parameters: ``query`` (the backend's query text), on PostgreSQL ``ranked`` (its
    wanted terms only: ``ts_rank`` gives 0 to a query with a negation), ``limit``, ``offset``,
    and those the ``conditions`` (on ``e``, the event, and ``s``, its session's first event) name.

    Args:
        dialect: The backend.
        conditions: Extra conditions, ANDed.
    """
    extra = "".join(f" AND {condition}" for condition in conditions)
    session = _session_join(conditions)
    if dialect == "sqlite":
        return (
            f"SELECT {_COLUMNS}, -bm25(tl_search) AS score FROM tl_search "
            f"JOIN tl_events e ON e.position = tl_search.rowid{session} "
            f"WHERE tl_search MATCH :query{extra} "
            "ORDER BY bm25(tl_search), e.position DESC LIMIT :limit OFFSET :offset"
        )
    return (
        f"SELECT {_COLUMNS}, ts_rank(t.doc, to_tsquery('simple', :ranked)) AS score "
        "FROM to_tsquery('simple', :query) AS q(q) JOIN tl_search t ON t.doc @@ q.q "
        f"JOIN tl_events e ON e.position = t.position{session} "
        f"WHERE TRUE{extra} "
        "ORDER BY score DESC, e.position DESC LIMIT :limit OFFSET :offset"
    )


def waiting_statement(conditions: list[str], dialect: str = "sqlite") -> str:
    """Return the ``SELECT`` of the thoughts the index has not taken in yet, in log order.

    Each row is an event's columns, then on SQLite its text as the index would take it (``NULL``
    once redacted, or when the payload is not JSON); on PostgreSQL ``NULL`` (the caller reads
    the text from the payload: a cast to JSON in SQL would fail the whole read on a payload
    damaged outside the ledger), and a thought an import indexed in its own transaction is not
    among them.

    Args:
        conditions: Extra conditions, ANDed (as for :func:`search_statement`).
        dialect: ``sqlite`` or ``postgresql``.
    """
    extra = "".join(f" AND {condition}" for condition in conditions)
    session = _session_join(conditions)
    if dialect == "sqlite":
        text = sqlite_text("e.payload")
        # A payload that is not JSON is skipped, as the index skips it.
        kept = "json_valid(e.payload)"
    else:
        text = "NULL"
        kept = "NOT EXISTS (SELECT 1 FROM tl_search x WHERE x.position = e.position)"
    return (
        f"SELECT {_COLUMNS}, {text} AS t FROM tl_events e{session} "
        "WHERE e.position > (SELECT position FROM tl_search_through WHERE id = 1) "
        f"AND e.event_type IN ({THOUGHT_TYPES_SQL}) AND {kept}{extra} "
        "ORDER BY e.position"
    )


__all__ = [
    "PG_DOC",
    "PG_TEXT",
    "SQLITE_ADD",
    "SQLITE_FILL",
    "THOUGHT_TYPES_SQL",
    "pg_rows",
    "search_statement",
    "sqlite_text",
    "waiting_statement",
]
