"""SQLite's expressions in the SQL statements (see :mod:`.ledger.store.sql_stats`).

Payloads are stored as text and read with ``json_extract``; times are kept as canonical UTC text
(see :mod:`thoughtledger.ledger.envelope`), so a start time compares as text and its date is its
first ten characters. The statements written as text never import SQLAlchemy: only
:meth:`SqliteStats.json`, for the reads built with it, loads it.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.store.stats_rows import SessionFacts

if TYPE_CHECKING:
    import sqlalchemy as sa


class SqliteStats:
    """The :class:`~thoughtledger.ledger.store.sql_stats.StatsDialect` of SQLite."""

    not_needed_sql = "0"
    """``json_extract`` gives SQLite's 0 for false."""

    def json(self, payload: "sa.ColumnElement[str]", *path: str) -> Any:
        """Return the value at ``path`` in a JSON payload stored as text (SQLAlchemy Core)."""
        import sqlalchemy as sa

        return sa.func.json_extract(payload, "$." + ".".join(path))

    def json_sql(self, payload: str, *path: str) -> str:
        """Return the value at ``path`` in a JSON payload stored as text."""
        return f"json_extract({payload}, '$.{'.'.join(path)}')"

    def started_bound(self, moment: datetime) -> object:
        """Return ``moment`` as canonical text, as times are kept."""
        return format_time(moment)

    def day_sql(self, started_at: str) -> str:
        """Return the date of a start time: canonical UTC text, whose date comes first."""
        return f"substr({started_at}, 1, 10)"

    def estimate_sql(self, value: str) -> str:
        """Return ``value`` as is: ``json_extract`` already gives an integer."""
        return value

    def gap_ms_sql(self, earlier: str, later: str) -> str:
        """Return the time between two recorded times in whole milliseconds."""
        # julianday rounds each time to the millisecond; round() only removes float noise.
        return f"CAST(round((julianday({later}) - julianday({earlier})) * 86400000) AS INTEGER)"

    def session_facts(self, rows: Iterable[Sequence[Any]]) -> list[SessionFacts]:
        """Return the facts' rows with ``completed`` as a ``bool`` (SQLite gives 0 or 1)."""
        return [
            SessionFacts._make((*row[:10], None if row[10] is None else bool(row[10])))
            for row in rows
        ]


SQLITE_STATS = SqliteStats()

__all__ = ["SQLITE_STATS", "SqliteStats"]
