"""Schema steps that also write rows derived from the log already there, in batches.

A step's DDL runs first (:data:`thoughtledger.ledger.store.schema_steps.MIGRATIONS`); a step
named in :data:`FILLS` then goes through the whole log a batch at a time, reporting its
progress, so that upgrading a ledger of millions of events says how far it is (each backend's
setup runs it).
"""

from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa


@dataclass(frozen=True, slots=True)
class Fill:
    """Rows a schema step derives from the events already in the log, written in batches.

    The runner runs the step's DDL, then :attr:`statement` over each batch of events (positions
    ``:low`` excluded to ``:high``, see :data:`FILL_BOUNDARY`) reporting its progress, then
    :attr:`then`; all of it in the step's one transaction.

    Attributes:
        description: What the step is doing, as a person reads it.
        statement: The batch's statement (bound parameters ``low`` and ``high``).
        then: DDL to run once the rows are written (an index is built faster over them all).
        backends: The backends whose upgrade runs the fill (another does the step in its DDL).
    """

    description: str
    statement: sa.schema.ExecutableDDLElement
    then: list[sa.schema.ExecutableDDLElement]
    backends: tuple[str, ...] = ("sqlite", "postgresql")


FILL_STEPS = 100
"""About how many batches a fill takes, whatever the size of the log (its progress moves in
steps of about 1%)."""
FILL_BATCH_MIN = 1_000
"""The fewest events a batch covers (a small log is filled in one or a few statements)."""
FILL_COUNT = "SELECT count(*) FROM tl_events"
"""How many events a fill goes through."""
FILL_BOUNDARY = (
    "SELECT position FROM tl_events WHERE position > :low ORDER BY position LIMIT 1 OFFSET :skip"
)
"""The position ending a batch: the ``skip + 1``-th event after position ``low`` (none: the
batch runs to the end of the log). Positions are not dense on PostgreSQL, so batches are
counted in events."""
LAST_POSITION = 2**63 - 1
"""Beyond every position (the ``high`` of a fill's last batch)."""


def fill_batch_size(events: int) -> int:
    """Return how many events each batch of a fill covers, for a log of ``events`` events."""
    return max(FILL_BATCH_MIN, -(-events // FILL_STEPS))


def _search_fill() -> Fill:
    from thoughtledger.ledger.store.search_index import SEARCH_AFTER_FILL, SEARCH_FILL

    return Fill("Indexing thoughts for search", SEARCH_FILL, SEARCH_AFTER_FILL)


def _binary_fill() -> Fill:
    from thoughtledger.ledger.store.search_index import DialectDDL
    from thoughtledger.ledger.store.stored_forms import BINARY_FILL_SQLITE

    text = "Storing hashes and event ids in binary"
    return Fill(text, DialectDDL(BINARY_FILL_SQLITE, ""), [], backends=("sqlite",))


HEADS_AGREEING_SQLITE = (
    "DELETE FROM tl_sessions WHERE session_id IN (SELECT e.session_id FROM tl_events e "
    "JOIN tl_sessions s ON s.session_id = e.session_id AND s.version = e.version "
    "WHERE s.hash = CASE WHEN typeof(e.hash) = 'blob' THEN lower(hex(e.hash)) ELSE e.hash END "
    "AND e.position > :low AND e.position <= :high AND NOT EXISTS (SELECT 1 FROM tl_events n "
    "WHERE n.session_id = e.session_id AND n.version > e.version))"
)
"""Step 19's batch on SQLite: the head rows of the sessions whose last event lies in the batch
and is the event the row names (its version and hash) are deleted."""
HEADS_AGREEING_POSTGRES = (
    "DELETE FROM tl_sessions s USING tl_events e WHERE s.session_id = e.session_id "
    "AND s.version = e.version AND s.hash = encode(e.hash, 'hex') "
    "AND e.position > :low AND e.position <= :high AND NOT EXISTS (SELECT 1 FROM tl_events n "
    "WHERE n.session_id = e.session_id AND n.version > e.version)"
)
"""Step 19's batch on PostgreSQL (the same, its hashes in ``bytea``)."""


def _heads_fill() -> Fill:
    from thoughtledger.ledger.store.search_index import DialectDDL

    # What a head row said is read from the log since step 19; a row that disagrees with the
    # log (the session's tail was cut, or its head rewritten) is kept: verify reports it.
    drop = "DROP INDEX IF EXISTS tl_sessions_started"
    text = "Checking each session's head against its log"
    return Fill(
        text,
        DialectDDL(HEADS_AGREEING_SQLITE, HEADS_AGREEING_POSTGRES),
        [DialectDDL(drop, drop)],
    )


FILLS: dict[int, Callable[[], Fill]] = {9: _search_fill, 18: _binary_fill, 19: _heads_fill}
"""The steps that also write rows derived from the log (after their DDL, in batches)."""


__all__ = [
    "FILLS",
    "FILL_BATCH_MIN",
    "FILL_BOUNDARY",
    "FILL_COUNT",
    "FILL_STEPS",
    "HEADS_AGREEING_POSTGRES",
    "HEADS_AGREEING_SQLITE",
    "LAST_POSITION",
    "Fill",
    "fill_batch_size",
]
