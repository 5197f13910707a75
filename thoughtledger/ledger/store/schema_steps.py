"""The schema's steps: the DDL that brings a database from each version to the next.

Opening a SQL ledger runs the steps its database still needs (:func:`pending_steps`) in one
transaction; a step with a fill (:mod:`thoughtledger.ledger.store.schema_fills`) rewrites rows
after its DDL. The tables themselves, and the version this code writes, are in
:mod:`thoughtledger.ledger.store.schema`.
"""

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from thoughtledger.ledger.store.columns import (
    ACTIONS_VIEW,
    ANNOTATIONS_VIEW,
    SESSION_LOOPS_VIEW,
    THOUGHTS_VIEW,
)
from thoughtledger.ledger.store.schema import (
    DATABASE_SCHEMA_VERSION,
    JsonText,
    events,
    loops,
    loops_behind,
    loops_through,
    sessions,
    tree_nodes,
    tree_tip,
)
from thoughtledger.ledger.store.sql_views import (
    VIEWS,
    CreateView,
    DropView,
    session_loops_select,
)


def _session_events_index(name: str, event_type: str) -> sa.schema.ExecutableDDLElement:
    """A partial index of one event type's versions in each session.

    A session's events of that type are found without a scan, and an append of any other type
    writes nothing to it.
    """
    of_type = events.c.event_type == event_type
    return sa.schema.CreateIndex(
        sa.Index(
            name,
            events.c.session_id,
            events.c.version,
            sqlite_where=of_type,
            postgresql_where=of_type,
        ),
        if_not_exists=True,
    )


def _tables(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    return [
        sa.schema.CreateTable(events, if_not_exists=True),
        sa.schema.CreateTable(sessions, if_not_exists=True),
    ]


def _listing_indexes(json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    started = events.c.event_type == "session.started"
    return [
        # Sessions newest first, paged by (start, id).
        sa.schema.CreateIndex(
            sa.Index("tl_sessions_started", sessions.c.started_at, sessions.c.session_id),
            if_not_exists=True,
        ),
        # One principal's sessions newest first: the owner is a fact of the session's first
        # event (never a mutable column), indexed where it is written.
        sa.schema.CreateIndex(
            sa.Index(
                "tl_events_owner",
                json(events.c.payload, "owner"),
                events.c.recorded_at,
                events.c.session_id,
                sqlite_where=started,
                postgresql_where=started,
            ),
            if_not_exists=True,
        ),
    ]


def _analytics_views(json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Views store no rows: creating them on a large ledger is instant, and they follow every
    # later append without any write of their own.
    return [CreateView(name, build(json, events)) for name, build in VIEWS.items()]


def _merkle_tree(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    return [
        sa.schema.CreateTable(tree_nodes, if_not_exists=True),
        sa.schema.CreateTable(tree_tip, if_not_exists=True),
        # A block is found by the position of an event in it (proving that event).
        sa.schema.CreateIndex(
            sa.Index(
                "tl_tree_blocks",
                tree_nodes.c.first_position,
                sqlite_where=tree_nodes.c.first_position.isnot(None),
                postgresql_where=tree_nodes.c.first_position.isnot(None),
            ),
            if_not_exists=True,
        ),
    ]


def _redactable_views(json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # tl_thoughts reads a thought's text where payload schema 2 keeps it, and says whether it
    # was redacted (it is dropped and created: a view's columns cannot be changed in place).
    return [
        DropView(THOUGHTS_VIEW),
        CreateView(THOUGHTS_VIEW, VIEWS[THOUGHTS_VIEW](json, events)),
        # A session's redactions, found without a scan (a history page counts them).
        _session_events_index("tl_events_redactions", "thought.redacted"),
    ]


def _annotations_view(json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 7 (annotations): the tl_annotations view, and an index that finds a session's
    # annotations without a scan. Self-contained: it touches nothing another step makes.
    return [
        DropView(ANNOTATIONS_VIEW),
        CreateView(ANNOTATIONS_VIEW, VIEWS[ANNOTATIONS_VIEW](json, events)),
        _session_events_index("tl_events_annotations", "thought.annotated"),
    ]


def _forks(json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 8 (forks). A source's forks: a fork is a fact of its first event, indexed where it
    # is written; and tl_session_stats gains the fork's source and version (views re-created).
    started = events.c.event_type == "session.started"
    return [
        *refreshed_views(json),
        sa.schema.CreateIndex(
            sa.Index(
                "tl_events_fork_of",
                json(events.c.payload, "fork_of"),
                events.c.session_id,
                sqlite_where=started,
                postgresql_where=started,
            ),
            if_not_exists=True,
        ),
    ]


def _search_index(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # The full-text index and its triggers (see thoughtledger.ledger.store.search_index); the
    # thoughts already in the log are indexed by the step's fill (FILLS). A read-only opening
    # of an older ledger searches nothing and says so.
    from thoughtledger.ledger.store.search_index import SEARCH_INDEX

    return list(SEARCH_INDEX)


def _loop_marks(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 10 (see thoughtledger.ledger.store.loop_marks): the loop marks, the sessions behind
    # on them (every session already in the log: SQL cannot compare texts, so the facade marks
    # them at the ledger's first writable opening) and the tl_session_loops view.
    from thoughtledger.ledger.store.search_index import DialectDDL

    all_behind = "INSERT INTO tl_loops_behind (session_id) SELECT session_id FROM tl_sessions"
    return [
        sa.schema.CreateTable(loops, if_not_exists=True),
        sa.schema.CreateTable(loops_behind, if_not_exists=True),
        DialectDDL(all_behind, all_behind),
        DropView(SESSION_LOOPS_VIEW),
        CreateView(SESSION_LOOPS_VIEW, _listed_loops_select()),
    ]


def _listed_loops_select() -> sa.Select[Any]:
    """Step 10's ``tl_session_loops`` (marks current unless listed behind), replaced by step 12."""
    repeats = (
        sa.select(sa.func.count())
        .where(loops.c.session_id == sessions.c.session_id)
        .correlate(sessions)
        .scalar_subquery()
    )
    listed = sa.exists().where(loops_behind.c.session_id == sessions.c.session_id)
    return sa.select(
        sessions.c.session_id.label("session_id"),
        repeats.label("repeats"),
        sa.case((listed, sa.false()), else_=sa.true()).label("marks_current"),
    )


def _search_follows(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 11: on SQLite the search index follows the log in batches instead of in every
    # append's transaction (see thoughtledger.ledger.store.sqlite.search_follow).
    from thoughtledger.ledger.store.search_index import SEARCH_FOLLOWS

    return list(SEARCH_FOLLOWS)


def _loops_follow(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 12: the loop marks follow the log with a position instead of being written in each
    # append's transaction (see thoughtledger.ledger.store.loop_marks). The position starts
    # before the first event of any session step 10 listed as behind (the fold takes them in,
    # in the background), else at the log's end: every other session's marks were current.
    from thoughtledger.ledger.store.search_index import DialectDDL

    start = (
        "INSERT INTO tl_loops_through (id, position) SELECT 1, coalesce("
        "(SELECT min(e.position) - 1 FROM tl_events e JOIN tl_loops_behind b "
        "ON b.session_id = e.session_id), (SELECT max(position) FROM tl_events), 0)"
    )
    return [
        sa.schema.CreateTable(loops_through, if_not_exists=True),
        DialectDDL(start, start),
        DropView(SESSION_LOOPS_VIEW),
        DialectDDL("DROP TABLE tl_loops_behind", "DROP TABLE tl_loops_behind"),
        CreateView(SESSION_LOOPS_VIEW, _headed_loops_select()),
    ]


def _headed_loops_select() -> sa.Select[Any]:
    """Step 12's ``tl_session_loops`` (one row per head of ``tl_sessions``), replaced by step 19."""
    repeats = (
        sa.select(sa.func.count())
        .where(loops.c.session_id == sessions.c.session_id)
        .correlate(sessions)
        .scalar_subquery()
    )
    head_position = (
        sa.select(events.c.position)
        .where(events.c.session_id == sessions.c.session_id, events.c.version == sessions.c.version)
        .correlate(sessions)
        .scalar_subquery()
    )
    position = sa.select(loops_through.c.position).where(loops_through.c.id == 1).scalar_subquery()
    return sa.select(
        sessions.c.session_id.label("session_id"),
        repeats.label("repeats"),
        sa.case((head_position <= position, sa.true()), else_=sa.false()).label("marks_current"),
    )


def _postgres_search_follows(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 13: PostgreSQL's search index follows the log as SQLite's does since step 11: its
    # insert trigger is dropped, and tl_search_through says how far the index goes (see
    # thoughtledger.ledger.store.postgres.search_follow). Nothing to do on SQLite.
    from thoughtledger.ledger.store.search_index import SEARCH_FOLLOWS_POSTGRES

    return list(SEARCH_FOLLOWS_POSTGRES)


def _counted_events(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 14: the positions of the few events the ledger-wide figures read from the whole log
    # (model-written thoughts, annotations), indexed apart, so stats reads them without a scan
    # of every row. Partial: an append of any other event writes nothing to it.
    from thoughtledger.ledger.store.rows import COUNTED_TYPES, types_in
    from thoughtledger.ledger.store.search_index import DialectDDL

    create = (
        "CREATE INDEX IF NOT EXISTS tl_events_counted ON tl_events (position) "
        f"WHERE event_type IN {types_in(COUNTED_TYPES)}"
    )
    return [DialectDDL(create, create)]


def _stripped_types(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 15: the search index's redaction triggers made again with every thought type
    # (captured reasoning's among them; see thoughtledger.ledger.store.search_index).
    from thoughtledger.ledger.store.search_index import SEARCH_STRIPPED_TYPES

    return list(SEARCH_STRIPPED_TYPES)


def _captured_downstream(json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 16: what agents did and thought where their telemetry was captured. The tl_actions
    # view (one row per action.taken); tl_thoughts made again, reading a captured thought's
    # model and provider; and the counted events' index made again with captured thoughts
    # among its types (stats counts them per model): an index's condition cannot be changed
    # in place.
    from thoughtledger.ledger.store.rows import COUNTED_TYPES, types_in
    from thoughtledger.ledger.store.search_index import DialectDDL

    drop = "DROP INDEX IF EXISTS tl_events_counted"
    create = (
        "CREATE INDEX tl_events_counted ON tl_events (position) "
        f"WHERE event_type IN {types_in(COUNTED_TYPES)}"
    )
    return [
        DropView(ACTIONS_VIEW),
        CreateView(ACTIONS_VIEW, VIEWS[ACTIONS_VIEW](json, events)),
        DropView(THOUGHTS_VIEW),
        CreateView(THOUGHTS_VIEW, VIEWS[THOUGHTS_VIEW](json, events)),
        DialectDDL(drop, drop),
        DialectDDL(create, create),
    ]


def _actions(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 17: a session's actions, found without a scan, as its annotations and redactions are
    # (a history page counts the events that are not thoughts out of its thought count).
    # Partial: an append of any other event writes nothing to it.
    return [
        _session_events_index("tl_events_actions", "action.taken"),
    ]


def _binary_hashes(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 18: hashes and event ids in binary. PostgreSQL changes the columns' types in one
    # statement; on SQLite the step's fill writes the rows again in batches (FILLS).
    from thoughtledger.ledger.store.search_index import DialectDDL
    from thoughtledger.ledger.store.stored_forms import BINARY_COLUMNS_POSTGRES

    return [DialectDDL("SELECT 1", BINARY_COLUMNS_POSTGRES)]


def _heads_from_log(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 19: a session's head is read from the log (its last event, by the stream key), and
    # no append writes a head row any more. Its first event, written once per session, is what
    # listing reads: by id, and newest first. tl_session_loops is made again over those first
    # events; the step's fill then deletes every head row that agrees with the log, keeping
    # only the evidence of a tail cut before the upgrade (see FILLS), and drops the heads'
    # index by start.
    first = events.c.version == 1
    return [
        sa.schema.CreateIndex(
            sa.Index(
                "tl_events_first",
                events.c.session_id,
                sqlite_where=first,
                postgresql_where=first,
            ),
            if_not_exists=True,
        ),
        sa.schema.CreateIndex(
            sa.Index(
                "tl_events_started",
                events.c.recorded_at,
                events.c.session_id,
                sqlite_where=first,
                postgresql_where=first,
            ),
            if_not_exists=True,
        ),
        DropView(SESSION_LOOPS_VIEW),
        CreateView(SESSION_LOOPS_VIEW, session_loops_select(loops, events, loops_through)),
    ]


def _stripped_upsert(_json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    # Step 20: PostgreSQL's redaction trigger upserts the thought's new words (see
    # thoughtledger.ledger.store.search_index).
    from thoughtledger.ledger.store.search_index import SEARCH_STRIPPED_UPSERT

    return list(SEARCH_STRIPPED_UPSERT)


MIGRATIONS: dict[int, Callable[[JsonText], list[sa.schema.ExecutableDDLElement]]] = {
    1: _tables,
    2: _listing_indexes,
    3: _analytics_views,
    4: _merkle_tree,
    5: _redactable_views,
    7: _annotations_view,
    8: _forks,
    9: _search_index,
    10: _loop_marks,
    11: _search_follows,
    12: _loops_follow,
    13: _postgres_search_follows,
    14: _counted_events,
    15: _stripped_types,
    16: _captured_downstream,
    17: _actions,
    18: _binary_hashes,
    19: _heads_from_log,
    20: _stripped_upsert,
}
"""Schema step N brings a database from its previous step to N: given the backend's JSON
expression, the DDL statements it runs, in one transaction."""


UpgradeProgress = Callable[[str, int, int], None]
"""Told how an upgrade goes: what it is doing, how many events of the log it has gone through,
and how many there are (called at the start, after each batch, and at the end)."""


assert max(MIGRATIONS) == DATABASE_SCHEMA_VERSION  # noqa: S101  # the newest step is the version


def refreshed_views(json: JsonText) -> list[sa.schema.ExecutableDDLElement]:
    """The DDL re-creating both analytics views from the definition (see ``views_current``)."""
    return [
        *(DropView(name) for name in VIEWS),
        *(CreateView(name, build(json, events)) for name, build in VIEWS.items()),
    ]


def pending_steps(current: int) -> list[int]:
    """Return the schema steps a database at version ``current`` still needs, in order."""
    return [step for step in sorted(MIGRATIONS) if step > current]


__all__ = [
    "MIGRATIONS",
    "UpgradeProgress",
    "pending_steps",
    "refreshed_views",
]
