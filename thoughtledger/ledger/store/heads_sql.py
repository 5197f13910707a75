"""Sessions' heads read from the log itself, for the SQL backends (schema step 19).

A session's head is its last event: the version the (session, version) key ends at and that
event's hash and time, one index look-up away; when it began is its first event's time. Since
step 19 no row beside the log is written per append to say so (see
:data:`thoughtledger.ledger.store.schema.sessions`). Listing reads each session's first event
from ``tl_events_first`` (by id) or ``tl_events_started`` (newest first): partial indexes over
the version-1 rows, written once per session. SQLAlchemy is imported with this module, which the
stores load only past their inline reads.
"""

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from thoughtledger.ledger.store.schema import events as EVENTS

if TYPE_CHECKING:
    from sqlalchemy.sql.selectable import NamedFromClause

FIRST_VERSION: sa.ColumnElement[int] = sa.literal_column("1", sa.Integer)
"""A session's first version, as SQL text (what the partial indexes of first events name)."""
HEAD_COLUMNS = ("session_id", "version", "hash", "started_at", "updated_at")
"""A head row's columns, in order (read by :func:`~thoughtledger.ledger.store.rows.head_of_row`)."""


def heads_select() -> "tuple[sa.Select[Any], NamedFromClause]":
    """Every session's head: its first event ``f`` joined to its last (filter and order on ``f``).

    Returns:
        The select of :data:`HEAD_COLUMNS`, and the alias of the first events, whose
        ``session_id`` and ``recorded_at`` (the start) a caller filters and orders by.
    """
    first, last, any_ = EVENTS.alias("f"), EVENTS.alias("l"), EVENTS.alias("m")
    # max(version) of one session: the last entry of its range of the stream key.
    last_version = (
        sa.select(sa.func.max(any_.c.version))
        .where(any_.c.session_id == first.c.session_id)
        .scalar_subquery()
    )
    query = (
        sa.select(
            first.c.session_id,
            last.c.version,
            last.c.hash,
            first.c.recorded_at.label("started_at"),
            last.c.recorded_at.label("updated_at"),
        )
        .select_from(
            first.join(
                last,
                sa.and_(last.c.session_id == first.c.session_id, last.c.version == last_version),
            )
        )
        # A literal, never a bound value: only then may the partial indexes of first events serve.
        .where(first.c.version == FIRST_VERSION)
    )
    return query, first


def last_event_select(session_id: Any) -> sa.Select[Any]:
    """The version, hash and time of a session's last event (no row: a new session)."""
    return (
        sa.select(EVENTS.c.version, EVENTS.c.hash, EVENTS.c.recorded_at)
        .where(EVENTS.c.session_id == session_id)
        .order_by(EVENTS.c.version.desc())
        .limit(sa.literal_column("1"))
        .offset(sa.literal_column("0"))
    )


__all__ = ["FIRST_VERSION", "HEAD_COLUMNS", "heads_select", "last_event_select"]
