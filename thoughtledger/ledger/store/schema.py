"""Tables of the SQL backends and the version of their schema.

The schema carries its own version in ``tl_schema``. Opening a database applies the missing steps
(:mod:`thoughtledger.ledger.store.schema_steps`) in order inside one transaction; a database
whose version is newer than :data:`DATABASE_SCHEMA_VERSION` is refused rather than touched.
Nothing is ever dropped and recreated. (The version of an event's payload is another matter:
:data:`thoughtledger.ledger.events.PAYLOAD_SCHEMA_VERSION`.)
"""

import sqlalchemy as sa

from thoughtledger.ledger.store.sql_views import JsonPath

DATABASE_SCHEMA_VERSION = 20
"""The version of the database's tables this code creates and reads."""
READABLE_FROM = 1
"""The oldest schema this code reads without upgrading it. The steps since add indexes (a
read-only opening of an older ledger answers the same, if more slowly); the analytics views,
which this code never reads itself (its exports fold the log, see
:mod:`thoughtledger.ledger.store.sql_views`), so an older ledger opened read-only simply has none
(or, before step 5, a ``tl_thoughts`` without the redacted texts' column) for other SQL tools until
it is opened once for writing; and the Merkle tree's tables, which a read-only opening does without
(it answers no proof; it still verifies a checkpoint, from the log itself)."""

JsonText = JsonPath
"""A backend's expression for the value at a path (one or more keys) in a JSON payload stored
as text."""

metadata = sa.MetaData()

_Time = sa.DateTime(timezone=True).with_variant(sa.String(32), "sqlite")
# SQLite keeps times as fixed-width ISO text (see thoughtledger.ledger.envelope.format_time): text
# order is time order, and the stored text is exactly what the hash chain covers.

_EventId = sa.String(36).with_variant(sa.Uuid(as_uuid=True), "postgresql")
_Hash = sa.String(64).with_variant(sa.LargeBinary(), "postgresql")
# Binary since step 18 (see ledger.store.stored_forms); SQLite's text columns hold BLOBs as is.

events = sa.Table(
    "tl_events",
    metadata,
    sa.Column(
        "position",
        sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
        primary_key=True,
        autoincrement=False,
    ),
    sa.Column("session_id", sa.String(128), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("event_id", _EventId, nullable=False),
    sa.Column("recorded_at", _Time, nullable=False),
    sa.Column("schema_version", sa.SmallInteger, nullable=False),
    sa.Column("event_type", sa.String(64), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("prev_hash", _Hash, nullable=False),
    sa.Column("hash", _Hash, nullable=False),
    sa.UniqueConstraint("session_id", "version", name="tl_events_stream_key"),
    sa.UniqueConstraint("event_id", name="tl_events_event_id_key"),
)
"""The log: one row per event, never updated, never deleted."""

sessions = sa.Table(
    "tl_sessions",
    metadata,
    sa.Column("session_id", sa.String(128), primary_key=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("hash", sa.String(64), nullable=False),
    sa.Column("started_at", _Time, nullable=False),
    sa.Column("updated_at", _Time, nullable=False),
)
"""Until schema step 19, one row per session: its head (last version and hash), moved in every
append's transaction. Since step 19 a session's head is read from the log itself (see
:mod:`thoughtledger.ledger.store.heads_sql`) and nothing is written here; the step kept only
the rows that disagreed with the log then (a tail cut before the upgrade), which ``verify``
still reports. Normally empty."""

tree_nodes = sa.Table(
    "tl_tree_nodes",
    metadata,
    sa.Column("level", sa.SmallInteger, primary_key=True, autoincrement=False),
    sa.Column("idx", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("hash", sa.String(64), nullable=False),
    sa.Column("first_position", sa.BigInteger, nullable=True),
    sa.Column("last_position", sa.BigInteger, nullable=True),
)
"""The Merkle tree's full subtrees from :data:`thoughtledger.ledger.store.log_tree.BLOCK_LEVEL` up
(see :mod:`thoughtledger.ledger.store.log_tree`); a block (a subtree at that level) also names the
positions of its first and last event, where its leaves are read from. Derived from the log, never
trusted by
verification: a wrong row makes proofs that fail, never a proof that passes."""

tree_tip = sa.Table(
    "tl_tree",
    metadata,
    sa.Column("id", sa.SmallInteger, primary_key=True, autoincrement=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("position", sa.BigInteger, nullable=False),
)
"""One row (``id`` 1): how many events the tree covers, and the position of the last one. The
guard every extension of the tree moves (``WHERE size = <the size it read>``)."""

loops = sa.Table(
    "tl_loops",
    metadata,
    sa.Column("session_id", sa.String(128), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("repeats_version", sa.Integer, nullable=False),
    sa.Column("similarity", sa.Float, nullable=False),
)
"""Loop marks: one row per thought that repeats an earlier one of its session (schema step 10,
see :mod:`thoughtledger.ledger.store.loop_marks`). Written by the fold that follows the log, up
to ``tl_loops_through``; holds no text."""

loops_behind = sa.Table(
    "tl_loops_behind",
    sa.MetaData(),  # not the schema's: step 12 drops it
    sa.Column("session_id", sa.String(128), primary_key=True),
)
"""Steps 10 and 11 only: the sessions whose marks were not written with their append. Step 12
replaced it by :data:`loops_through` and dropped it."""

loops_through = sa.Table(
    "tl_loops_through",
    metadata,
    sa.Column("id", sa.SmallInteger, primary_key=True, autoincrement=False),
    sa.Column("position", sa.BigInteger, nullable=False),
)
"""One row (``id`` 1): the position up to which the loop marks took in every event (step 12)."""

schema_versions = sa.Table(
    "tl_schema",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied_at", sa.String(32), nullable=False),
)


__all__ = [
    "DATABASE_SCHEMA_VERSION",
    "READABLE_FROM",
    "JsonText",
    "events",
    "loops",
    "loops_behind",
    "loops_through",
    "metadata",
    "schema_versions",
    "sessions",
    "tree_nodes",
    "tree_tip",
]
