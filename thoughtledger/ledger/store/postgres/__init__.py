"""The PostgreSQL backend: the store and the modules it is built from.

``store`` is the backend itself; ``setup`` checks and migrates the database and translates the
driver's errors, and ``stats`` holds PostgreSQL's expressions in the statistics' statements.
"""

from thoughtledger.ledger.store.postgres.store import POSITION_SHIFT, PostgresEventStore

__all__ = ["POSITION_SHIFT", "PostgresEventStore"]
