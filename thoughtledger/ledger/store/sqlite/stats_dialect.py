"""SQLite's expressions in the statistics' statements (see :mod:`.ledger.store.sql_stats`).

Payloads are stored as text and read with ``json_extract``; times are kept as canonical UTC text
(see :mod:`thoughtledger.ledger.envelope`), so a start time compares as text and its date is its
first ten characters.
"""

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from thoughtledger.ledger.envelope import format_time


class SqliteStats:
    """The :class:`~thoughtledger.ledger.store.sql_stats.StatsDialect` of SQLite."""

    not_needed: object = 0
    """``json_extract`` gives SQLite's 0 for false."""

    def json(self, payload: sa.ColumnElement[str], *path: str) -> Any:
        """Return the value at ``path`` in a JSON payload stored as text."""
        return sa.func.json_extract(payload, "$." + ".".join(path))

    def started_bound(self, moment: datetime) -> object:
        """Return ``moment`` as canonical text, as start times are kept."""
        return format_time(moment)

    def day(self, started_at: sa.ColumnElement[Any]) -> Any:
        """Return the date of a start time: canonical UTC text, whose date comes first."""
        return sa.func.substr(started_at, 1, 10)

    def estimate(self, value: Any) -> Any:
        """Return ``value`` as is: ``json_extract`` already gives an integer."""
        return value

    def gap_ms(self, earlier: sa.ColumnElement[Any], later: sa.ColumnElement[Any]) -> Any:
        """Return the time between two recorded times in whole milliseconds."""
        # julianday rounds each time to the millisecond; round() only removes float noise.
        days = sa.func.julianday(later) - sa.func.julianday(earlier)
        return sa.cast(sa.func.round(days * 86_400_000), sa.Integer)


SQLITE_STATS = SqliteStats()

__all__ = ["SQLITE_STATS", "SqliteStats"]
