"""The full-text index of the SQL backends (schema steps 9 and 11).

The statements reading it are in :mod:`thoughtledger.ledger.store.search_text`.

**SQLite**: ``tl_search``, an FTS5 table without content of its own (``content=''``: the text
lives once, in the log), its rowid the event's position. Since schema step 11 the writer adds the
thoughts in batches after their appends, up to ``tl_search_through``, and a search reads the
thoughts after that from the log itself (see :mod:`.ledger.store.sqlite.search_follow`):
at every commit that adds a document FTS5 writes a new segment, its structure record and its
totals (about 186k instructions, four times a whole plain insert and commit, where a document
itself adds about 25k; none of its options moves it), which in each append's own transaction (a
trigger, steps 9 and 10) halved the rate of one-event appends. A trigger takes a redacted
thought's words out when a redaction strips an indexed payload (FTS5's ``delete`` command, given
the old text). The tokenizer keeps diacritics, as PostgreSQL's ``simple`` configuration does.

**PostgreSQL**: ``tl_search``, one ``tsvector`` per thought event (``simple`` configuration: no
stemming, no stop words, as SQLite), under a GIN index. Steps 9 to 12 kept it by a
statement-level trigger on inserts; since step 13 the store adds the thoughts in batches after
their appends, up to ``tl_search_through``, as SQLite's writer does (see
:mod:`.ledger.store.postgres.search_follow`). A row trigger on the payload updates a redaction
makes takes the thought's words out. The text is indexed with its punctuation turned into spaces,
so that a word is a run of letters and digits on both backends.

Step 9 indexes the thoughts already in the log in batches of events (reporting its progress),
all in the step's one transaction: an interrupted upgrade leaves the ledger as it was.
"""

# ruff: noqa: S608  # every piece joined below is a constant of this module: no input reaches it

from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import DDLCompiler

from thoughtledger.ledger.store.search_text import (
    PG_DOC,
    PG_TEXT,
    SQLITE_ADD,
    SQLITE_FILL,
    THOUGHT_TYPES_SQL,
    pg_rows,
    sqlite_text,
)


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


def _sqlite_stripped(guard: str = "") -> str:
    """The SQLite trigger that takes a redacted thought's words out of the index."""
    return (
        "CREATE TRIGGER IF NOT EXISTS tl_search_stripped AFTER UPDATE OF payload ON tl_events "
        # A payload damaged outside the ledger (not JSON) is the verifier's to report: the
        # index must not make the damage itself fail.
        f"WHEN new.event_type IN ({THOUGHT_TYPES_SQL}) AND json_valid(old.payload) "
        f"AND json_valid(new.payload){guard} BEGIN "
        "INSERT INTO tl_search(tl_search, rowid, text) SELECT 'delete', old.position, t FROM "
        "(SELECT "
        + sqlite_text("old.payload")
        + " AS t) WHERE t IS NOT NULL; "
        + SQLITE_ADD.format(position="new.position", payload="new.payload")
        + "; END"
    )


_PG_STRIPPED = (
    "CREATE OR REPLACE FUNCTION tl_search_stripped() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN DELETE FROM tl_search WHERE position = OLD.position; "
    "INSERT INTO tl_search (position, doc) SELECT NEW.position, "
    + PG_DOC.format(text="t")
    + " FROM (SELECT "
    + PG_TEXT.format(payload="NEW.payload")
    # An update that does not take the index's turn (a payload changed by hand, outside the
    # ledger) can meet a catch-up indexing the same thought: the catch-up's row, committed
    # between this DELETE and INSERT, is replaced rather than failing the update.
    + " AS t) AS texts WHERE t IS NOT NULL "
    "ON CONFLICT (position) DO UPDATE SET doc = EXCLUDED.doc; RETURN NULL; END $$"
)
"""PostgreSQL's function behind the redaction trigger: the thought's words replaced by those of
its new payload (none once its text is stripped)."""


SEARCH_INDEX: list[sa.schema.ExecutableDDLElement] = [
    DialectDDL(
        "CREATE VIRTUAL TABLE IF NOT EXISTS tl_search USING fts5("
        "text, content='', tokenize='unicode61 remove_diacritics 0')",
        "CREATE TABLE IF NOT EXISTS tl_search (position BIGINT PRIMARY KEY, doc TSVECTOR NOT NULL)",
    ),
    DialectDDL(
        "CREATE TRIGGER IF NOT EXISTS tl_search_added AFTER INSERT ON tl_events "
        f"WHEN new.event_type IN ({THOUGHT_TYPES_SQL}) AND json_valid(new.payload) BEGIN "
        + SQLITE_ADD.format(position="new.position", payload="new.payload")
        + "; END",
        "CREATE OR REPLACE FUNCTION tl_search_added() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN " + pg_rows("added") + "; RETURN NULL; END $$",
    ),
    DialectDDL(_sqlite_stripped(), _PG_STRIPPED),
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
        f"WHEN (NEW.event_type IN ({THOUGHT_TYPES_SQL})) EXECUTE FUNCTION tl_search_stripped()",
    ),
]
"""Schema step 9's statements before the thoughts already in the log are indexed, in order
(``SELECT 1`` where a backend has nothing to do)."""

_RANGE = "position > :low AND position <= :high"
SEARCH_FILL = DialectDDL(
    SQLITE_FILL, pg_rows("tl_events", f"{_RANGE} AND ") + " ON CONFLICT DO NOTHING"
)
"""Index the thoughts already in the log at positions ``:low`` (excluded) to ``:high``."""

SEARCH_AFTER_FILL: list[sa.schema.ExecutableDDLElement] = [
    # Built once over the filled rows: far faster than growing it a row at a time.
    DialectDDL("SELECT 1", "CREATE INDEX IF NOT EXISTS tl_search_doc ON tl_search USING gin (doc)"),
]
"""Schema step 9's statements once the log is indexed."""

SEARCH_FOLLOWS: list[sa.schema.ExecutableDDLElement] = [
    # SQLite: an append no longer indexes its thoughts in its own transaction; the writer brings
    # the index up to the log's end in batches (see ledger.store.sqlite.search_follow).
    DialectDDL("DROP TRIGGER IF EXISTS tl_search_added", "SELECT 1"),
    DialectDDL(
        "CREATE TABLE IF NOT EXISTS tl_search_through ("
        "id INTEGER PRIMARY KEY CHECK (id = 1), position INTEGER NOT NULL)",
        "SELECT 1",
    ),
    # Every thought in the log is indexed at this point (by the trigger just dropped).
    DialectDDL(
        "INSERT OR IGNORE INTO tl_search_through (id, position) "
        "SELECT 1, coalesce(max(position), 0) FROM tl_events",
        "SELECT 1",
    ),
    DialectDDL("DROP TRIGGER IF EXISTS tl_search_stripped", "SELECT 1"),
    # A thought not indexed yet has no words to take out: it is indexed later, as redacted.
    DialectDDL(
        _sqlite_stripped(" AND old.position <= (SELECT position FROM tl_search_through)"),
        "SELECT 1",
    ),
]
"""Schema step 11's statements (``SELECT 1`` where a backend has nothing to do)."""

SEARCH_FOLLOWS_POSTGRES: list[sa.schema.ExecutableDDLElement] = [
    # PostgreSQL: an append no longer indexes its thoughts in its own transaction; the store
    # brings the index up to the log's end in batches (see ledger.store.postgres.search_follow).
    DialectDDL("SELECT 1", "DROP TRIGGER IF EXISTS tl_search_added ON tl_events"),
    DialectDDL("SELECT 1", "DROP FUNCTION IF EXISTS tl_search_added()"),
    DialectDDL(
        "SELECT 1",
        "CREATE TABLE IF NOT EXISTS tl_search_through ("
        "id SMALLINT PRIMARY KEY CHECK (id = 1), position BIGINT NOT NULL)",
    ),
    # The trigger just dropped indexed every event committed so far; one still in flight (its
    # transaction older than the oldest one running) has positions above this one, and the
    # catch-up takes it in (a thought indexed twice is kept once).
    DialectDDL(
        "SELECT 1",
        "INSERT INTO tl_search_through (id, position) SELECT 1, coalesce(max(position), 0) "
        "FROM tl_events WHERE position < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
        " << 16) ON CONFLICT (id) DO NOTHING",
    ),
]
"""Schema step 13's statements: PostgreSQL's index follows the log, as SQLite's does since 11."""

SEARCH_STRIPPED_TYPES: list[sa.schema.ExecutableDDLElement] = [
    # The redaction triggers name the thought types they act on: a ledger made before a type
    # was added (captured reasoning, thought.captured) would keep a redacted thought of it in
    # the index. Made again with today's types.
    DialectDDL("DROP TRIGGER IF EXISTS tl_search_stripped", "SELECT 1"),
    DialectDDL(
        _sqlite_stripped(" AND old.position <= (SELECT position FROM tl_search_through)"),
        "SELECT 1",
    ),
    DialectDDL("SELECT 1", "DROP TRIGGER IF EXISTS tl_search_stripped ON tl_events"),
    DialectDDL(
        "SELECT 1",
        "CREATE TRIGGER tl_search_stripped AFTER UPDATE OF payload ON tl_events FOR EACH ROW "
        f"WHEN (NEW.event_type IN ({THOUGHT_TYPES_SQL})) EXECUTE FUNCTION tl_search_stripped()",
    ),
]
"""Schema step 15's statements: the redaction triggers of the search index, with every thought
type (``SELECT 1`` where a backend has nothing to do)."""

SEARCH_STRIPPED_UPSERT: list[sa.schema.ExecutableDDLElement] = [
    DialectDDL("SELECT 1", _PG_STRIPPED),
]
"""Schema step 20's statements: PostgreSQL's redaction trigger replaces a row a catch-up wrote
meanwhile instead of failing on it (SQLite's writer is alone: nothing to do)."""

__all__ = [
    "SEARCH_AFTER_FILL",
    "SEARCH_FILL",
    "SEARCH_FOLLOWS",
    "SEARCH_FOLLOWS_POSTGRES",
    "SEARCH_INDEX",
    "SEARCH_STRIPPED_UPSERT",
    "DialectDDL",
]
