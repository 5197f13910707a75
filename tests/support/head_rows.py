"""Taking a ledger back to schema 18, where every session had a head row beside the log."""

_HEADS = (
    "INSERT INTO tl_sessions (session_id, version, hash, started_at, updated_at) "
    "SELECT f.session_id, l.version, {hash}, f.recorded_at, l.recorded_at "
    "FROM tl_events f JOIN tl_events l ON l.session_id = f.session_id AND l.version = "
    "(SELECT max(m.version) FROM tl_events m WHERE m.session_id = f.session_id) "
    "WHERE f.version = 1"
)
_LOOPS = (
    # Step 12's view, as it wrote it: one row per head row.
    "CREATE VIEW tl_session_loops AS SELECT s.session_id AS session_id, "
    "(SELECT count(*) FROM tl_loops l WHERE l.session_id = s.session_id) AS repeats, "
    "CASE WHEN (SELECT e.position FROM tl_events e WHERE e.session_id = s.session_id "
    "AND e.version = s.version) <= (SELECT position FROM tl_loops_through WHERE id = 1) "
    "THEN {true} ELSE {false} END AS marks_current FROM tl_sessions s"
)


def take_back_heads(backend: str) -> list[str]:
    """The statements undoing schema step 19 (heads read from the log) on ``backend``.

    Each session gets the head row step 18 kept (its last event's version and hash as hex, its
    first and last events' times), the index by start comes back, the first events' indexes go,
    and ``tl_session_loops`` reads the head rows again.
    """
    sqlite = backend == "sqlite"
    text_hash = (
        "CASE WHEN typeof(l.hash) = 'blob' THEN lower(hex(l.hash)) ELSE l.hash END"
        if sqlite
        else "encode(l.hash, 'hex')"
    )
    true, false = ("1", "0") if sqlite else ("true", "false")
    return [
        _HEADS.format(hash=text_hash),
        "CREATE INDEX tl_sessions_started ON tl_sessions (started_at, session_id)",
        "DROP INDEX tl_events_first",
        "DROP INDEX tl_events_started",
        "DROP VIEW tl_session_loops",
        _LOOPS.format(true=true, false=false),
        "DELETE FROM tl_schema WHERE version > 18",
    ]


__all__ = ["take_back_heads"]
