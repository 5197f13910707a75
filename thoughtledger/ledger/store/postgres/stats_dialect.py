"""PostgreSQL's expressions in the statistics' statements (see :mod:`.ledger.store.sql_stats`).

Payloads are stored as text and read with ``payload::json ->>`` (``json`` is parsed without
``jsonb``'s re-encoding); times are kept as ``timestamptz``.
"""

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql


class _WholeNumber(sa.types.TypeDecorator[int]):
    """``numeric`` in SQL (no 32- or 64-bit ceiling), a Python ``int`` when read back."""

    impl = sa.Numeric
    cache_ok = True

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> int | None:
        return None if value is None else int(value)


class PostgresStats:
    """The :class:`~thoughtledger.ledger.store.sql_stats.StatsDialect` of PostgreSQL."""

    not_needed: object = "false"
    """``->>`` gives PostgreSQL the text 'false'."""

    def json(self, payload: sa.ColumnElement[str], *path: str) -> Any:
        """Return the text at ``path`` in a JSON payload stored as text."""
        document = sa.cast(payload, postgresql.JSON)
        return document[path[0]].astext if len(path) == 1 else document[path].astext

    def started_bound(self, moment: datetime) -> object:
        """Return ``moment`` as is: start times are kept as ``timestamptz``."""
        return moment

    def day(self, started_at: sa.ColumnElement[Any]) -> Any:
        """Return the UTC date of a start time."""
        return sa.func.to_char(sa.func.timezone("UTC", started_at), "YYYY-MM-DD")

    def estimate(self, value: Any) -> Any:
        """Return the text ``->>`` gives as a whole number of any size (estimates are unbounded)."""
        return sa.cast(value, _WholeNumber())

    def gap_ms(self, earlier: sa.ColumnElement[Any], later: sa.ColumnElement[Any]) -> Any:
        """Return the time between two recorded times in whole milliseconds (rounded half up)."""

        def millis(column: Any) -> Any:
            return sa.func.floor(sa.extract("epoch", column) * 1000 + 0.5)

        return sa.cast(millis(later) - millis(earlier), sa.BigInteger)


POSTGRES_STATS = PostgresStats()

__all__ = ["POSTGRES_STATS", "PostgresStats"]
