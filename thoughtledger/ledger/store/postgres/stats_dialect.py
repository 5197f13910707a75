"""PostgreSQL's expressions in the SQL statements (see :mod:`.ledger.store.sql_stats`).

Payloads are stored as text and read with ``payload::json ->>`` (``json`` is parsed without
``jsonb``'s re-encoding); times are kept as ``timestamptz``.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from thoughtledger.ledger.store.stats_rows import SessionFacts


class PostgresStats:
    """The :class:`~thoughtledger.ledger.store.sql_stats.StatsDialect` of PostgreSQL."""

    not_needed_sql = "'false'"
    """``->>`` gives PostgreSQL the text 'false'."""

    def json(self, payload: sa.ColumnElement[str], *path: str) -> Any:
        """Return the text at ``path`` in a JSON payload stored as text (SQLAlchemy Core)."""
        document = sa.cast(payload, postgresql.JSON)
        return document[path[0]].astext if len(path) == 1 else document[path].astext

    def json_sql(self, payload: str, *path: str) -> str:
        """Return the text at ``path`` in a JSON payload stored as text."""
        if len(path) == 1:
            return f"(CAST({payload} AS JSON) ->> '{path[0]}')"
        return f"(CAST({payload} AS JSON) #>> '{{{', '.join(path)}}}')"

    def started_bound(self, moment: datetime) -> object:
        """Return ``moment`` as is: times are kept as ``timestamptz``."""
        return moment

    def day_sql(self, started_at: str) -> str:
        """Return the UTC date of a start time."""
        return f"to_char(timezone('UTC', {started_at}), 'YYYY-MM-DD')"

    def estimate_sql(self, value: str) -> str:
        """Return the text ``->>`` gives as a whole number of any size (estimates are unbounded)."""
        return f"CAST({value} AS NUMERIC)"

    def gap_ms_sql(self, earlier: str, later: str) -> str:
        """Return the time between two recorded times in whole milliseconds (rounded half up)."""

        def millis(column: str) -> str:
            return f"floor(EXTRACT(epoch FROM {column}) * 1000 + 0.5)"

        return f"CAST({millis(later)} - {millis(earlier)} AS BIGINT)"

    def session_facts(self, rows: Iterable[Sequence[Any]]) -> list[SessionFacts]:
        """Return the facts' rows with the estimates as ``int`` (``numeric`` reads as Decimal)."""
        return [
            SessionFacts._make((*row[:8], _whole(row[8]), _whole(row[9]), row[10])) for row in rows
        ]


def _whole(value: Any) -> int | None:
    return None if value is None else int(value)


POSTGRES_STATS = PostgresStats()

__all__ = ["POSTGRES_STATS", "PostgresStats"]
