"""The full-text index of the SQL backends (schema step 9) and the statement that searches it.

**SQLite**: ``tl_search``, an FTS5 table without content of its own (``content=''``: the text
lives once, in the log), its rowid the event's position. Triggers on ``tl_events`` add a thought's
text when it is appended (in the append's own transaction, whichever way it is written: the group
commit, an import) and take it out when a redaction strips the payload (FTS5's ``delete`` command,
given the old text). The tokenizer keeps diacritics, as PostgreSQL's ``simple`` configuration does.
What this costs an append is FTS5's, whatever the trigger: at every commit that adds a
document FTS5 writes a new segment, its structure record and its totals (about 186k
instructions, four times a whole plain insert and commit, where a document itself adds about
25k); none of its options (``automerge``, ``crisismerge``, ``pgsz``, ``detail``) moves it, so
a one-event append with the index runs at about half the rate of one without (the
``search-append`` row of tools/bench).

**PostgreSQL**: ``tl_search``, one ``tsvector`` per thought event (``simple`` configuration: no
stemming, no stop words, as SQLite), under a GIN index, kept by a statement-level trigger on
inserts (one ``INSERT`` per append, whatever its size) and a row trigger on the payload updates a
redaction makes. The text is indexed with its punctuation turned into spaces, so that a word is a
run of letters and digits on both backends.

Step 9 indexes the thoughts already in the log in batches of events (reporting its progress),
all in the step's one transaction: an interrupted upgrade leaves the ledger as it was.
"""

# ruff: noqa: S608  # every piece joined below is a constant of this module: no input reaches it

from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import DDLCompiler

from thoughtledger.ledger.events import THOUGHT_TYPES

_TYPES = ", ".join(f"'{kind}'" for kind in sorted(THOUGHT_TYPES))
"""The thought events' types, as an SQL list (constants of ours: nothing from outside)."""


class DialectDDL(sa.schema.ExecutableDDLElement):
    """One DDL statement written for each backend (a step may differ where SQL does)."""

    def __init__(self, sqlite: str, postgresql: str) -> None:
        self.sqlite = sqlite
        self.postgresql = postgresql


@compiles(DialectDDL, "sqlite")
def _ddl_sqlite(element: DialectDDL, _compiler: DDLCompiler, **_kw: Any) -> str:
    return element.sqlite


@compiles(DialectDDL, "postgresql")
def _ddl_postgres(element: DialectDDL, _compiler: DDLCompiler, **_kw: Any) -> str:
    return element.postgresql


def _sqlite_text(payload: str) -> str:
    # Payload schema 2 keeps the text in its content member (gone once redacted); schema 1 at
    # the top.
    # json_extract ends a text at a U+0000: a payload that escapes one is read with a space
    # there (escaped backslashes set aside first, as for PostgreSQL below).
    json = (
        rf"(CASE WHEN instr({payload}, '\u0000') = 0 THEN {payload} ELSE replace(replace(replace("
        rf"{payload}, '\\', char(1)), '\u0000', '\u0020'), char(1), '\\') END)"
    )
    return f"coalesce(json_extract({json}, '$.content.thought'), json_extract({json}, '$.thought'))"


_SQLITE_ADD = (
    "INSERT INTO tl_search(rowid, text) SELECT {position}, t FROM "
    "(SELECT " + _sqlite_text("{payload}") + " AS t) WHERE t IS NOT NULL"
)

_PG_DOC = "to_tsvector('simple', regexp_replace({text}, '[[:punct:][:space:]]+', ' ', 'g'))"
_PG_JSON = (
    r"(CASE WHEN strpos({payload}, '\u0000') = 0 THEN {payload} ELSE replace(replace(replace("
    r"{payload}, '\\', chr(1)), '\u0000', '\u0020'), chr(1), '\\') END)::json"
)
# PostgreSQL cannot give a text holding U+0000 (its escape is refused, failing the append), so a
# payload that escapes one is read with it as a space: escaped backslashes are set aside first
# (chr(1) never occurs raw in JSON), so that only a real \u0000 escape is replaced.
_PG_TEXT = "coalesce(" + _PG_JSON + " #>> '{{content,thought}}', " + _PG_JSON + " ->> 'thought')"


def _pg_rows(source: str, where: str = "") -> str:
    """Index the thoughts among the rows of ``source`` (a table, or a trigger's new rows)."""
    return (
        "INSERT INTO tl_search (position, doc) SELECT position, "
        + _PG_DOC.format(text="t")
        + " FROM (SELECT position, "
        + _PG_TEXT.format(payload="payload")
        + f" AS t FROM {source} WHERE {where}event_type IN ({_TYPES})) AS texts WHERE t IS NOT NULL"
    )


SEARCH_INDEX: list[sa.schema.ExecutableDDLElement] = [
    DialectDDL(
        "CREATE VIRTUAL TABLE IF NOT EXISTS tl_search USING fts5("
        "text, content='', tokenize='unicode61 remove_diacritics 0')",
        "CREATE TABLE IF NOT EXISTS tl_search (position BIGINT PRIMARY KEY, doc TSVECTOR NOT NULL)",
    ),
    DialectDDL(
        "CREATE TRIGGER IF NOT EXISTS tl_search_added AFTER INSERT ON tl_events "
        f"WHEN new.event_type IN ({_TYPES}) AND json_valid(new.payload) BEGIN "
        + _SQLITE_ADD.format(position="new.position", payload="new.payload")
        + "; END",
        "CREATE OR REPLACE FUNCTION tl_search_added() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN " + _pg_rows("added") + "; RETURN NULL; END $$",
    ),
    DialectDDL(
        "CREATE TRIGGER IF NOT EXISTS tl_search_stripped AFTER UPDATE OF payload ON tl_events "
        # A payload damaged outside the ledger (not JSON) is the verifier's to report: the
        # index must not make the damage itself fail.
        f"WHEN new.event_type IN ({_TYPES}) AND json_valid(old.payload) "
        "AND json_valid(new.payload) BEGIN "
        "INSERT INTO tl_search(tl_search, rowid, text) SELECT 'delete', old.position, t FROM "
        "(SELECT "
        + _sqlite_text("old.payload")
        + " AS t) WHERE t IS NOT NULL; "
        + _SQLITE_ADD.format(position="new.position", payload="new.payload")
        + "; END",
        "CREATE OR REPLACE FUNCTION tl_search_stripped() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN DELETE FROM tl_search WHERE position = OLD.position; "
        "INSERT INTO tl_search (position, doc) SELECT NEW.position, "
        + _PG_DOC.format(text="t")
        + " FROM (SELECT "
        + _PG_TEXT.format(payload="NEW.payload")
        + " AS t) AS texts WHERE t IS NOT NULL; RETURN NULL; END $$",
    ),
    DialectDDL(
        "SELECT 1",
        "DROP TRIGGER IF EXISTS tl_search_added ON tl_events",
    ),
    DialectDDL(
        "SELECT 1",
        "CREATE TRIGGER tl_search_added AFTER INSERT ON tl_events REFERENCING NEW TABLE AS added "
        "FOR EACH STATEMENT EXECUTE FUNCTION tl_search_added()",
    ),
    DialectDDL(
        "SELECT 1",
        "DROP TRIGGER IF EXISTS tl_search_stripped ON tl_events",
    ),
    DialectDDL(
        "SELECT 1",
        "CREATE TRIGGER tl_search_stripped AFTER UPDATE OF payload ON tl_events FOR EACH ROW "
        f"WHEN (NEW.event_type IN ({_TYPES})) EXECUTE FUNCTION tl_search_stripped()",
    ),
]
"""Schema step 9's statements before the thoughts already in the log are indexed, in order
(``SELECT 1`` where a backend has nothing to do)."""

_RANGE = "position > :low AND position <= :high"
SEARCH_FILL = DialectDDL(
    # A payload that is not JSON is skipped, as the triggers skip it.
    "INSERT INTO tl_search(rowid, text) SELECT position, t FROM (SELECT position, "
    + _sqlite_text("payload")
    + f" AS t FROM tl_events WHERE {_RANGE} AND event_type IN ({_TYPES}) "
    "AND json_valid(payload)) WHERE t IS NOT NULL",
    _pg_rows("tl_events", f"{_RANGE} AND ") + " ON CONFLICT DO NOTHING",
)
"""Index the thoughts already in the log at positions ``:low`` (excluded) to ``:high``."""

SEARCH_AFTER_FILL: list[sa.schema.ExecutableDDLElement] = [
    # Built once over the filled rows: far faster than growing it a row at a time.
    DialectDDL("SELECT 1", "CREATE INDEX IF NOT EXISTS tl_search_doc ON tl_search USING gin (doc)"),
]
"""Schema step 9's statements once the log is indexed."""


_COLUMNS = (
    "e.position, e.session_id, e.version, e.event_id, e.recorded_at, e.schema_version, "
    "e.event_type, e.payload, e.prev_hash, e.hash"
)


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
    session = (
        " JOIN tl_events s ON s.session_id = e.session_id AND s.version = 1"
        if any("s." in condition for condition in conditions)
        else ""
    )
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


__all__ = ["SEARCH_AFTER_FILL", "SEARCH_FILL", "SEARCH_INDEX", "DialectDDL", "search_statement"]
