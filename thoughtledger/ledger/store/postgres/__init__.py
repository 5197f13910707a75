"""The PostgreSQL backend: the store and the modules it is built from.

``store`` is the backend itself; ``append`` holds the one statement an append is, and ``writers``
the connections held for writes; ``setup`` checks and migrates the database and translates the
driver's errors, and ``stats_dialect`` holds PostgreSQL's expressions in the statistics' statements.
"""

from thoughtledger.ledger.store.postgres.store import POSITION_SHIFT, PostgresEventStore

__all__ = ["POSITION_SHIFT", "PostgresEventStore"]
