"""The SQLite backend, the embedded default: the store and the modules it is built from.

``store`` is the backend itself; ``batch`` groups queued appends into one commit, ``setup`` opens,
configures and migrates the database file, ``statements`` holds the pre-compiled SQL of the hot
paths, and ``readonly`` opens a file that may not be written (the second read path).
"""

from thoughtledger.ledger.store.sqlite.store import Durability, SqliteEventStore

__all__ = ["Durability", "SqliteEventStore"]
