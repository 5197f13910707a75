"""The SQLite backend's hot statements, as plain text, so that serving never imports SQLAlchemy.

Importing SQLAlchemy costs a third of a second, and an MCP client spawns the server for every
conversation. The statements below are exactly what :func:`compile_statements` produces from the
table definitions in :mod:`thoughtledger.ledger.store.schema` (a unit test holds them equal), so the
tables stay the one source of truth and no SQL is assembled at run time.
"""

from typing import Any

DATABASE_SCHEMA_VERSION = 20
"""The database schema version the statements are for (``schema.DATABASE_SCHEMA_VERSION``)."""
READABLE_FROM = 1
"""``schema.READABLE_FROM``: the oldest schema read without upgrading (later steps add indexes
and the analytics views, which reading never needs)."""

STATEMENTS: dict[str, str] = {
    "insert_event": (
        "INSERT INTO tl_events (position, session_id, version, event_id, record"
        "ed_at, schema_version, event_type, payload, prev_hash, hash) VALUES (?"
        ", ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "insert_first": (
        "INSERT INTO tl_events (position, session_id, version, event_id, record"
        "ed_at, schema_version, event_type, payload, prev_hash, hash) VALUES (N"
        "ULL, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING position"
    ),
    "select_head": (
        "SELECT tl_events.version, tl_events.hash, tl_events.recorded_at \nFROM "
        "tl_events \nWHERE tl_events.session_id = :session_id ORDER BY tl_events"
        ".version DESC\n LIMIT 1 OFFSET 0"
    ),
    "select_hash": (
        "SELECT tl_events.hash \nFROM tl_events \nWHERE tl_events.session_id = :s"
        "ession_id AND tl_events.version = :version"
    ),
    "read_stream": (
        "SELECT tl_events.position, tl_events.session_id, tl_events.version, tl"
        "_events.event_id, tl_events.recorded_at, tl_events.schema_version, tl_"
        "events.event_type, tl_events.payload, tl_events.prev_hash, tl_events.h"
        "ash \nFROM tl_events \nWHERE tl_events.session_id = :session_id AND tl_e"
        "vents.version > :after ORDER BY tl_events.version"
    ),
    "read_stream_to": (
        "SELECT tl_events.position, tl_events.session_id, tl_events.version, tl"
        "_events.event_id, tl_events.recorded_at, tl_events.schema_version, tl_"
        "events.event_type, tl_events.payload, tl_events.prev_hash, tl_events.h"
        "ash \nFROM tl_events \nWHERE tl_events.session_id = :session_id AND tl_e"
        "vents.version > :after AND tl_events.version <= :to ORDER BY tl_events"
        ".version"
    ),
    "read_stream_page": (
        "SELECT tl_events.position, tl_events.session_id, tl_events.version, tl"
        "_events.event_id, tl_events.recorded_at, tl_events.schema_version, tl_"
        "events.event_type, tl_events.payload, tl_events.prev_hash, tl_events.h"
        "ash \nFROM tl_events \nWHERE tl_events.session_id = :session_id AND tl_e"
        "vents.version > :after AND tl_events.version <= :to ORDER BY tl_events"
        ".version\n LIMIT :limit OFFSET :offset"
    ),
    "session_head": (
        "SELECT f.session_id, l.version, l.hash, f.recorded_at AS started_at, l"
        ".recorded_at AS updated_at \nFROM tl_events AS f JOIN tl_events AS l ON"
        " l.session_id = f.session_id AND l.version = (SELECT max(m.version) AS"
        " max_1 \nFROM tl_events AS m \nWHERE m.session_id = f.session_id) \nWHERE"
        " f.version = 1 AND f.session_id = :session_id"
    ),
    "list_heads": (
        "SELECT f.session_id, l.version, l.hash, f.recorded_at AS started_at, l"
        ".recorded_at AS updated_at \nFROM tl_events AS f JOIN tl_events AS l ON"
        " l.session_id = f.session_id AND l.version = (SELECT max(m.version) AS"
        " max_1 \nFROM tl_events AS m \nWHERE m.session_id = f.session_id) \nWHERE"
        " f.version = 1 AND f.session_id > :after ORDER BY f.session_id\n LIMIT "
        ":limit OFFSET :offset"
    ),
    "recent_heads": (
        "SELECT f.session_id, l.version, l.hash, f.recorded_at AS started_at, l"
        ".recorded_at AS updated_at \nFROM tl_events AS f JOIN tl_events AS l ON"
        " l.session_id = f.session_id AND l.version = (SELECT max(m.version) AS"
        " max_1 \nFROM tl_events AS m \nWHERE m.session_id = f.session_id) \nWHERE"
        " f.version = 1 ORDER BY f.recorded_at DESC, f.session_id DESC\n LIMIT :"
        "limit OFFSET :offset"
    ),
    "recent_heads_before": (
        "SELECT f.session_id, l.version, l.hash, f.recorded_at AS started_at, l"
        ".recorded_at AS updated_at \nFROM tl_events AS f JOIN tl_events AS l ON"
        " l.session_id = f.session_id AND l.version = (SELECT max(m.version) AS"
        " max_1 \nFROM tl_events AS m \nWHERE m.session_id = f.session_id) \nWHERE"
        " f.version = 1 AND (f.recorded_at < :moment OR f.recorded_at = :moment"
        " AND f.session_id < :before) ORDER BY f.recorded_at DESC, f.session_id"
        " DESC\n LIMIT :limit OFFSET :offset"
    ),
    "fork_heads": (
        "SELECT f.session_id, l.version, l.hash, f.recorded_at AS started_at, l"
        ".recorded_at AS updated_at \nFROM tl_events AS f JOIN tl_events AS l ON"
        " l.session_id = f.session_id AND l.version = (SELECT max(m.version) AS"
        " max_1 \nFROM tl_events AS m \nWHERE m.session_id = f.session_id) \nWHERE"
        " f.version = 1 AND f.session_id IN (SELECT tl_events.session_id \nFROM "
        "tl_events \nWHERE tl_events.event_type = 'session.started' AND json_ext"
        "ract(tl_events.payload, '$.fork_of') = :session_id) ORDER BY f.recorde"
        "d_at, f.session_id"
    ),
    "recorded_heads": (
        "SELECT tl_sessions.session_id, tl_sessions.version, tl_sessions.hash \nFROM tl_sessions"
    ),
    "disputed_head": (
        "SELECT tl_sessions.version, tl_sessions.hash \nFROM tl_sessions \nWHERE "
        "tl_sessions.session_id = :session_id"
    ),
    "read_log_rows": (
        "SELECT tl_events.position, tl_events.session_id, tl_events.version, tl"
        "_events.recorded_at, tl_events.schema_version, tl_events.event_type, t"
        "l_events.payload \nFROM tl_events \nWHERE tl_events.position > :after OR"
        "DER BY tl_events.position\n LIMIT :limit OFFSET :offset"
    ),
    "read_all": (
        "SELECT tl_events.position, tl_events.session_id, tl_events.version, tl"
        "_events.event_id, tl_events.recorded_at, tl_events.schema_version, tl_"
        "events.event_type, tl_events.payload, tl_events.prev_hash, tl_events.h"
        "ash \nFROM tl_events \nWHERE tl_events.position > :after ORDER BY tl_eve"
        "nts.position\n LIMIT :limit OFFSET :offset"
    ),
    "schema_version": ("SELECT coalesce(max(tl_schema.version), 0) AS coalesce_1 \nFROM tl_schema"),
    "last_position": ("SELECT coalesce(max(tl_events.position), 0) AS coalesce_1 \nFROM tl_events"),
    "insert_loop": (
        "INSERT INTO tl_loops (session_id, version, repeats_version, similarity"
        ") VALUES (?, ?, ?, ?)"
    ),
}


def compile_statements() -> dict[str, str]:
    """Compile every hot statement from the SQLAlchemy table definitions (tests and upgrades)."""
    import sqlalchemy as sa
    from sqlalchemy.dialects import sqlite as sqlite_dialect

    from thoughtledger.ledger.store import schema

    named = sqlite_dialect.dialect(paramstyle="named")
    qmark = sqlite_dialect.dialect(paramstyle="qmark")

    def sql(statement: Any, dialect: Any = named) -> str:
        return str(statement.compile(dialect=dialect))

    from thoughtledger.ledger.store.heads_sql import heads_select, last_event_select

    t, s = schema.events, schema.sessions
    heads, first = heads_select()

    stream = sa.select(t).where(
        t.c.session_id == sa.bindparam("session_id"), t.c.version > sa.bindparam("after")
    )
    return {
        # Positional parameters in column order: executemany over tuples is sqlite3's cheapest.
        "insert_event": sql(
            sa.insert(t).values({c: sa.bindparam(c.name) for c in t.columns}), qmark
        ),
        # The first event of an append takes the next rowid (the write lock makes it max + 1).
        "insert_first": sql(
            sa.insert(t).values(
                {c: sa.null() if c.name == "position" else sa.bindparam(c.name) for c in t.columns}
            ),
            qmark,
        ),
        # The session's last event: the head an append goes on from (its time too: an append
        # never records a time before its session's last one).
        "select_head": sql(last_event_select(sa.bindparam("session_id"))),
        "select_hash": sql(
            sa.select(t.c.hash).where(
                t.c.session_id == sa.bindparam("session_id"),
                t.c.version == sa.bindparam("version"),
            )
        ),
        "read_stream": sql(stream.order_by(t.c.version)),
        "read_stream_to": sql(
            stream.where(t.c.version <= sa.bindparam("to")).order_by(t.c.version)
        ),
        # A page of a long session: keyset on version, so every page is one short index range
        # (the offset is always 0: SQLite's dialect writes one wherever it writes a limit).
        "read_stream_page": sql(
            stream.where(t.c.version <= sa.bindparam("to"))
            .order_by(t.c.version)
            .limit(sa.bindparam("limit"))
            .offset(sa.bindparam("offset"))
        ),
        "session_head": sql(heads.where(first.c.session_id == sa.bindparam("session_id"))),
        # A page of heads in id order, after a given id ('' before the first: ids are not empty).
        "list_heads": sql(
            heads.where(first.c.session_id > sa.bindparam("after"))
            .order_by(first.c.session_id)
            .limit(sa.bindparam("limit"))
            .offset(sa.bindparam("offset"))
        ),
        # A page of heads newest first (by start, then id: tl_events_started), and the page
        # after a cursor's (start, id).
        "recent_heads": sql(
            heads.order_by(first.c.recorded_at.desc(), first.c.session_id.desc())
            .limit(sa.bindparam("limit"))
            .offset(sa.bindparam("offset"))
        ),
        "recent_heads_before": sql(
            heads.where(
                sa.or_(
                    first.c.recorded_at < sa.bindparam("moment"),
                    sa.and_(
                        first.c.recorded_at == sa.bindparam("moment"),
                        first.c.session_id < sa.bindparam("before"),
                    ),
                )
            )
            .order_by(first.c.recorded_at.desc(), first.c.session_id.desc())
            .limit(sa.bindparam("limit"))
            .offset(sa.bindparam("offset"))
        ),
        # The forks of a session, oldest first (tl_events_fork_of, the index of schema step 9).
        "fork_heads": sql(
            heads.where(
                first.c.session_id.in_(
                    sa.select(t.c.session_id).where(
                        t.c.event_type == sa.literal_column("'session.started'"),
                        sa.func.json_extract(t.c.payload, sa.literal_column("'$.fork_of'"))
                        == sa.bindparam("session_id"),
                    )
                )
            ).order_by(first.c.recorded_at, first.c.session_id)
        ),
        # Every head row left (see disputed_head).
        "recorded_heads": sql(sa.select(s.c.session_id, s.c.version, s.c.hash)),
        # A head row kept by schema step 19 because it disagreed with the log (normally none).
        "disputed_head": sql(
            sa.select(s.c.version, s.c.hash).where(s.c.session_id == sa.bindparam("session_id"))
        ),
        "read_log_rows": sql(
            sa.select(
                t.c.position,
                t.c.session_id,
                t.c.version,
                t.c.recorded_at,
                t.c.schema_version,
                t.c.event_type,
                t.c.payload,
            )
            .where(t.c.position > sa.bindparam("after"))
            .order_by(t.c.position)
            .limit(sa.bindparam("limit"))
            .offset(sa.bindparam("offset"))
        ),
        "read_all": sql(
            sa.select(t)
            .where(t.c.position > sa.bindparam("after"))
            .order_by(t.c.position)
            .limit(sa.bindparam("limit"))
            .offset(sa.bindparam("offset"))
        ),
        "schema_version": sql(
            sa.select(
                sa.func.coalesce(
                    sa.func.max(schema.schema_versions.c.version), sa.literal_column("0")
                )
            )
        ),
        # Under the write lock the next append starts right after this position.
        "last_position": sql(
            sa.select(sa.func.coalesce(sa.func.max(t.c.position), sa.literal_column("0")))
        ),
        # The loop marks a fold of the log found (see ledger.store.sqlite.loop_writes).
        "insert_loop": sql(
            sa.insert(schema.loops).values({c: sa.bindparam(c.name) for c in schema.loops.columns}),
            qmark,
        ),
    }


__all__ = ["DATABASE_SCHEMA_VERSION", "READABLE_FROM", "STATEMENTS", "compile_statements"]
