"""SQL that reads a thought's text out of a stored payload (no SQLAlchemy: serving uses it).

Shared by the schema's search index (:mod:`thoughtledger.ledger.store.search_index`) and the SQLite
writer that brings that index up to the log's end
(:mod:`thoughtledger.ledger.store.sqlite.search_follow`).
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


__all__ = [
    "PG_DOC",
    "PG_TEXT",
    "SQLITE_ADD",
    "SQLITE_FILL",
    "THOUGHT_TYPES_SQL",
    "pg_rows",
    "sqlite_text",
]
