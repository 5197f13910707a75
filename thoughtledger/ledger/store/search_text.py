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

__all__ = ["SQLITE_ADD", "SQLITE_FILL", "THOUGHT_TYPES_SQL", "sqlite_text"]
