"""The analytics views: the ledger as plain rows, for any SQL tool, without reading payloads.

Two views are part of the schema (step 3, see :mod:`thoughtledger.ledger.store.schema`) on every SQL
backend:

* ``tl_thoughts``: one row per thought (:data:`THOUGHT_COLUMNS`);
* ``tl_session_stats``: one row per session (:data:`SESSION_COLUMNS`);
* ``tl_annotations`` (step 7): one row per annotation (:data:`ANNOTATION_COLUMNS`);
* ``tl_actions`` (step 16): one row per action an agent took (:data:`ACTION_COLUMNS`).

Their definitions are SQLAlchemy selects over the log (``tl_events``) alone, compiled for each
backend with its JSON expression; what else differs between backends is in constructs compiled
per dialect: the time between two recorded times (:class:`MillisBetween`), a count read from a
payload (:class:`JsonCount`) and a payload's NUL characters (:class:`Cleaned`). The same rows
are folded from the log in Python by :mod:`thoughtledger.projections.thought_rows` (which the CSV
and Parquet exports use, so that they work on every backend and every readable schema); a contract
test holds the two equal.
"""

from collections.abc import Callable
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import DDLCompiler, SQLCompiler

from thoughtledger.ledger.events import ACTION_TYPE, ANNOTATION_TYPE, REDACTABLE_FROM, THOUGHT_TYPES
from thoughtledger.ledger.store.columns import (
    ACTION_COLUMNS,
    ACTIONS_VIEW,
    ANNOTATION_COLUMNS,
    ANNOTATIONS_VIEW,
    LARGEST_COUNT,
    NUL_ESCAPE,
    NUL_STANDIN,
    SESSION_COLUMNS,
    SESSION_LOOP_COLUMNS,
    SESSIONS_VIEW,
    THOUGHT_COLUMNS,
    THOUGHT_FIELD_COLUMNS,
    THOUGHTS_VIEW,
)
from thoughtledger.ledger.thought import ThoughtField


class JsonPath(Protocol):
    """A backend's expression for the text (or number) at a path in a JSON payload."""

    def __call__(self, payload: sa.ColumnElement[str], *path: str) -> Any:
        """Return the value at ``path`` in ``payload``."""


class MillisBetween(sa.sql.expression.ColumnElement[int]):
    """The time from ``earlier`` to ``later`` (two recorded times) in whole milliseconds.

    Each time is rounded to the millisecond, half up, as the statistics define it.
    """

    type = sa.BigInteger()
    inherit_cache = True

    def __init__(self, earlier: sa.ColumnElement[Any], later: sa.ColumnElement[Any]) -> None:
        self.earlier = earlier
        self.later = later


@compiles(MillisBetween, "sqlite")
def _millis_sqlite(element: MillisBetween, compiler: SQLCompiler, **kw: Any) -> str:
    # Times are canonical UTC text; julianday rounds each to the millisecond.
    later, earlier = compiler.process(element.later, **kw), compiler.process(element.earlier, **kw)
    return f"CAST(round((julianday({later}) - julianday({earlier})) * 86400000) AS INTEGER)"


@compiles(MillisBetween, "postgresql")
def _millis_postgres(element: MillisBetween, compiler: SQLCompiler, **kw: Any) -> str:
    later, earlier = compiler.process(element.later, **kw), compiler.process(element.earlier, **kw)
    return (
        f"CAST(floor(extract(epoch FROM {later}) * 1000 + 0.5)"
        f" - floor(extract(epoch FROM {earlier}) * 1000 + 0.5) AS BIGINT)"
    )


class JsonCount(sa.sql.expression.ColumnElement[int]):
    """A whole number read from a JSON payload; ``NULL`` from 10**18 on.

    Counts have no upper bound in the ledger, but a column needs one: a view that failed on one
    huge estimate would fail every query that touches it. So the views (and the fold that
    matches them) read a count of 19 digits or more as unknown.
    """

    type = sa.BigInteger()
    inherit_cache = True

    def __init__(self, value: sa.ColumnElement[Any]) -> None:
        self.value = value


@compiles(JsonCount, "sqlite")
def _count_sqlite(element: JsonCount, compiler: SQLCompiler, **kw: Any) -> str:
    # json_extract gives an integer up to 64 bits, a real beyond.
    value = compiler.process(element.value, **kw)
    return f"CASE WHEN typeof({value}) = 'integer' AND {value} <= {LARGEST_COUNT} THEN {value} END"


@compiles(JsonCount, "postgresql")
def _count_postgres(element: JsonCount, compiler: SQLCompiler, **kw: Any) -> str:
    # ->> gives the number's text: 18 digits at most always fit a bigint.
    value = compiler.process(element.value, **kw)
    return f"CASE WHEN {value} ~ '^[0-9]{{1,18}}$' THEN CAST({value} AS BIGINT) END"


class CreateView(sa.schema.ExecutableDDLElement):
    """``CREATE VIEW`` of a select, its values inlined (DDL takes no parameters)."""

    inherit_cache = False

    def __init__(self, name: str, select: sa.Select[Any]) -> None:
        self.name = name
        self.select = select


@compiles(CreateView)
def _create_view(element: CreateView, compiler: DDLCompiler, **_kw: Any) -> str:
    body = compiler.sql_compiler.process(element.select, literal_binds=True)
    return f"CREATE VIEW IF NOT EXISTS {element.name} AS {body}"


@compiles(CreateView, "postgresql")
def _create_view_postgres(element: CreateView, compiler: DDLCompiler, **_kw: Any) -> str:
    # PostgreSQL has no CREATE VIEW IF NOT EXISTS; a step runs once, under the schema lock.
    body = compiler.sql_compiler.process(element.select, literal_binds=True)
    return f"CREATE OR REPLACE VIEW {element.name} AS {body}"


class DropView(sa.schema.ExecutableDDLElement):
    """``DROP VIEW IF EXISTS`` (a view is redefined by dropping and creating it)."""

    inherit_cache = False

    def __init__(self, name: str) -> None:
        self.name = name


@compiles(DropView)
def _drop_view(element: DropView, compiler: DDLCompiler, **_kw: Any) -> str:
    return f"DROP VIEW IF EXISTS {element.name}"


class Cleaned(sa.sql.expression.ColumnElement[str]):
    """A stored payload with its NUL escapes read as U+FFFD's, where the backend needs it.

    PostgreSQL fails to read any field of a ``json`` value holding a NUL escape, so there every
    read goes through the replacement; SQLite reads numbers past it, and only cuts strings short
    at a NUL, so there only text reads (``for_text``) do.
    """

    type = sa.Text()
    inherit_cache = True

    def __init__(self, payload: sa.ColumnElement[str], *, for_text: bool) -> None:
        self.payload = payload
        self.for_text = for_text


def _replaced(element: Cleaned, compiler: SQLCompiler, **kw: Any) -> str:
    payload = compiler.process(element.payload, **kw)
    return f"replace({payload}, '{NUL_ESCAPE}', '{NUL_STANDIN}')"


@compiles(Cleaned, "sqlite")
def _cleaned_sqlite(element: Cleaned, compiler: SQLCompiler, **kw: Any) -> str:
    if element.for_text:
        return _replaced(element, compiler, **kw)
    return compiler.process(element.payload, **kw)


@compiles(Cleaned, "postgresql")
def _cleaned_postgres(element: Cleaned, compiler: SQLCompiler, **kw: Any) -> str:
    return _replaced(element, compiler, **kw)


def _clean(payload: sa.ColumnElement[str]) -> Any:
    return Cleaned(payload, for_text=True)


def _any(payload: sa.ColumnElement[str]) -> Any:
    return Cleaned(payload, for_text=False)


def _thought_types() -> list[str]:
    return sorted(THOUGHT_TYPES)


def thoughts_select(json: JsonPath, events: sa.Table) -> sa.Select[Any]:
    """Return the select behind ``tl_thoughts``: one row per thought, in log order."""
    e, start = events.alias("e"), events.alias("s")

    def integer(*path: str) -> Any:
        return JsonCount(json(_any(e.c.payload), *path))

    def boolean(*path: str) -> Any:
        return sa.cast(json(_any(e.c.payload), *path), sa.Boolean)

    def text(alias: Any, *path: str) -> Any:
        return json(_clean(alias.c.payload), *path)

    def read(field: ThoughtField) -> Any:
        if field.name == "thought":
            # Payload schema 2 keeps the text in its content member, gone once redacted.
            return sa.case(
                (e.c.schema_version >= REDACTABLE_FROM, text(e, "content", "thought")),
                else_=text(e, "thought"),
            )
        if field.column_type == "int64":
            return integer(field.name)
        if field.column_type == "bool":
            return boolean(field.name)
        return text(e, field.name)

    kind = sa.case(
        (e.c.event_type == "thought.generated", text(e, "kind")),
        else_=e.c.event_type,
    )
    columns: dict[str, Any] = {
        "position": e.c.position,
        "session_id": e.c.session_id,
        "version": e.c.version,
        "recorded_at": e.c.recorded_at,
        "agent": text(start, "metadata", "agent"),
        "client": text(start, "metadata", "client"),
        "kind": kind,
        **{field.name: read(field) for field in THOUGHT_FIELD_COLUMNS},
        # A captured thought names its model where the capture keeps it.
        "model": sa.func.coalesce(text(e, "generation", "model"), text(e, "capture", "model")),
        "provider": sa.func.coalesce(
            text(e, "generation", "provider"), text(e, "capture", "provider")
        ),
        "prompt_tokens": integer("generation", "prompt_tokens"),
        "completion_tokens": integer("generation", "completion_tokens"),
        "cost": sa.cast(json(_any(e.c.payload), "generation", "cost"), sa.Float),
        "latency_ms": integer("generation", "latency_ms"),
        "redacted": sa.case(
            (
                sa.and_(
                    e.c.schema_version >= REDACTABLE_FROM,
                    json(_any(e.c.payload), "content", "salt").is_(None),
                ),
                sa.true(),
            ),
            else_=sa.false(),
        ),
    }
    assert tuple(columns) == THOUGHT_COLUMNS  # noqa: S101  # the documented order
    return _with_start(columns, e, start).where(e.c.event_type.in_(_thought_types()))


def _with_start(columns: dict[str, Any], e: Any, start: Any) -> sa.Select[Any]:
    """Select ``columns`` (named by their keys) from events ``e`` beside their session's start.

    ``start`` is the session's ``session.started`` event (absent for a session without one).
    """
    return (
        sa.select(*(value.label(name) for name, value in columns.items()))
        .select_from(e)
        .outerjoin(
            start,
            sa.and_(
                start.c.session_id == e.c.session_id,
                start.c.version == 1,
                start.c.event_type == "session.started",
            ),
        )
    )


def _real(value: Any) -> Any:
    return sa.cast(value, sa.Float)


def sessions_select(json: JsonPath, events: sa.Table) -> sa.Select[Any]:
    """Return the select behind ``tl_session_stats``: one row per session.

    Its times are those of the session's first and last events (what the hash chain covers).
    """
    e = events
    thought = e.c.event_type.in_(_thought_types())
    generated = e.c.event_type == "thought.generated"
    kind = sa.case((generated, json(_any(e.c.payload), "kind")), else_=e.c.event_type)

    def usage(field: str, as_type: Any) -> Any:
        return sa.func.sum(as_type(json(_any(e.c.payload), "generation", field))).filter(generated)

    per_session = (
        sa.select(
            e.c.session_id,
            sa.func.count().label("events"),
            sa.func.count().filter(thought).label("thoughts"),
            sa.func.count().filter(kind == "thought.revised").label("revisions"),
            sa.func.count().filter(kind == "branch.opened").label("branches"),
            sa.func.count().filter(generated).label("generated"),
            sa.func.count().filter(e.c.event_type == "session.cleared").label("cleared"),
            sa.func.count().filter(e.c.event_type == "session.expired").label("expired"),
            sa.func.min(e.c.version).filter(thought).label("first_v"),
            sa.func.max(e.c.version).filter(thought).label("last_v"),
            sa.func.min(e.c.recorded_at).label("started_at"),
            sa.func.max(e.c.recorded_at).label("updated_at"),
            usage("prompt_tokens", JsonCount).label("prompt_tokens"),
            usage("completion_tokens", JsonCount).label("completion_tokens"),
            usage("cost", _real).label("cost"),
        )
        .group_by(e.c.session_id)
        .subquery("per_session")
    )
    start, first, last = events.alias("start"), events.alias("first"), events.alias("last")

    def at(alias: Any, version: Any, *more: sa.ColumnElement[bool]) -> sa.ColumnElement[bool]:
        return sa.and_(
            alias.c.session_id == per_session.c.session_id, alias.c.version == version, *more
        )

    def estimate(alias: Any) -> Any:
        return JsonCount(json(_any(alias.c.payload), "total_thoughts"))

    completed = sa.cast(json(_any(last.c.payload), "next_thought_needed"), sa.Boolean) == sa.false()
    status = sa.case(
        (per_session.c.cleared > 0, "cleared"),
        (per_session.c.expired > 0, "expired"),
        (completed, "completed"),
        else_="open",
    )
    columns: dict[str, Any] = {
        "session_id": per_session.c.session_id,
        "started_at": per_session.c.started_at,
        "updated_at": per_session.c.updated_at,
        "agent": json(_clean(start.c.payload), "metadata", "agent"),
        "client": json(_clean(start.c.payload), "metadata", "client"),
        "status": status,
        "events": per_session.c.events,
        "thoughts": per_session.c.thoughts,
        "revisions": per_session.c.revisions,
        "branches": per_session.c.branches,
        "generated": per_session.c.generated,
        "first_estimate": estimate(first),
        "last_estimate": estimate(last),
        "estimate_drift": estimate(last) - estimate(first),
        "completed": sa.case((completed, sa.true()), else_=sa.false()),
        "duration_ms": MillisBetween(per_session.c.started_at, per_session.c.updated_at),
        "thinking_ms": MillisBetween(first.c.recorded_at, last.c.recorded_at),
        "prompt_tokens": per_session.c.prompt_tokens,
        "completion_tokens": per_session.c.completion_tokens,
        "cost": per_session.c.cost,
        "fork_of": json(_clean(start.c.payload), "fork_of"),
        "fork_version": JsonCount(json(_any(start.c.payload), "fork_version")),
    }
    assert tuple(columns) == SESSION_COLUMNS  # noqa: S101  # the documented order
    return (
        sa.select(*(value.label(name) for name, value in columns.items()))
        .select_from(per_session)
        .outerjoin(start, at(start, 1, start.c.event_type == "session.started"))
        .outerjoin(first, at(first, per_session.c.first_v))
        .outerjoin(last, at(last, per_session.c.last_v))
    )


def annotations_select(json: JsonPath, events: sa.Table) -> sa.Select[Any]:
    """Return the select behind ``tl_annotations``: one row per annotation, in log order."""
    e, start = events.alias("e"), events.alias("s")

    def text(alias: Any, *path: str) -> Any:
        return json(_clean(alias.c.payload), *path)

    # Every annotation is written in the redactable layout: its note is in the content member.
    salt = json(_any(e.c.payload), "content", "salt")
    columns: dict[str, Any] = {
        "position": e.c.position,
        "session_id": e.c.session_id,
        "version": e.c.version,
        "recorded_at": e.c.recorded_at,
        "agent": text(start, "metadata", "agent"),
        "client": text(start, "metadata", "client"),
        "thought_number": JsonCount(json(_any(e.c.payload), "thought_number")),
        "label": text(e, "label"),
        "score": sa.cast(json(_any(e.c.payload), "score"), sa.Float),
        "note": sa.func.nullif(text(e, "content", "note"), ""),
        "annotated_by": text(e, "by"),
        "redacted": sa.case((salt.is_(None), sa.true()), else_=sa.false()),
    }
    assert tuple(columns) == ANNOTATION_COLUMNS  # noqa: S101  # the documented order
    return _with_start(columns, e, start).where(e.c.event_type == ANNOTATION_TYPE)


def actions_select(json: JsonPath, events: sa.Table) -> sa.Select[Any]:
    """Return the select behind ``tl_actions``: one row per action, in log order."""
    e, start = events.alias("e"), events.alias("s")

    def text(alias: Any, *path: str) -> Any:
        return json(_clean(alias.c.payload), *path)

    columns: dict[str, Any] = {
        "position": e.c.position,
        "session_id": e.c.session_id,
        "version": e.c.version,
        "recorded_at": e.c.recorded_at,
        "agent": text(start, "metadata", "agent"),
        "client": text(start, "metadata", "client"),
        "after_thought": JsonCount(json(_any(e.c.payload), "after_thought")),
        "name": text(e, "name"),
        "call_id": text(e, "call_id"),
        "arguments": text(e, "arguments"),
        # Left out of the payload when false (the ledger stores no default it need not).
        "arguments_cut": sa.case(
            (sa.cast(json(_any(e.c.payload), "arguments_cut"), sa.Boolean), sa.true()),
            else_=sa.false(),
        ),
        "trace_id": text(e, "trace_id"),
        "span_id": text(e, "span_id"),
    }
    assert tuple(columns) == ACTION_COLUMNS  # noqa: S101  # the documented order
    return _with_start(columns, e, start).where(e.c.event_type == ACTION_TYPE)


def session_loops_select(loops: sa.Table, events: sa.Table, through: sa.Table) -> sa.Select[Any]:
    """Return the select behind ``tl_session_loops``: one row per session (its first event).

    Not one of :data:`VIEWS` (which read the log alone): it reads the loop marks' table and
    their position (schema step 12). A session's marks are current when its last event lies at
    or before the position (two look-ups by key: its last version, then that event); else the
    stored repeats cover only its thoughts before the position, and ``marks_current`` is false.
    Since schema step 19 the sessions are their first events (``tl_events_first``), not the
    rows of ``tl_sessions``.
    """
    first, last, any_ = events.alias("f"), events.alias("l"), events.alias("m")
    repeats = (
        sa.select(sa.func.count())
        .where(loops.c.session_id == first.c.session_id)
        .correlate(first)
        .scalar_subquery()
    )
    last_version = (
        sa.select(sa.func.max(any_.c.version))
        .where(any_.c.session_id == first.c.session_id)
        .correlate(first)
        .scalar_subquery()
    )
    head_position = (
        sa.select(last.c.position)
        .where(last.c.session_id == first.c.session_id, last.c.version == last_version)
        .correlate(first)
        .scalar_subquery()
    )
    position = sa.select(through.c.position).where(through.c.id == 1).scalar_subquery()
    columns: dict[str, Any] = {
        "session_id": first.c.session_id,
        "repeats": repeats,
        "marks_current": sa.case((head_position <= position, sa.true()), else_=sa.false()),
    }
    assert tuple(columns) == SESSION_LOOP_COLUMNS  # noqa: S101  # the documented order
    return sa.select(*(value.label(name) for name, value in columns.items())).where(
        first.c.version == 1
    )


VIEWS: dict[str, Callable[[JsonPath, sa.Table], sa.Select[Any]]] = {
    THOUGHTS_VIEW: thoughts_select,
    SESSIONS_VIEW: sessions_select,
    ANNOTATIONS_VIEW: annotations_select,
    ACTIONS_VIEW: actions_select,
}
"""Each view's name and the function building its select."""

__all__ = [
    "VIEWS",
    "Cleaned",
    "CreateView",
    "DropView",
    "JsonCount",
    "JsonPath",
    "MillisBetween",
    "actions_select",
    "annotations_select",
    "session_loops_select",
    "sessions_select",
    "thoughts_select",
]
