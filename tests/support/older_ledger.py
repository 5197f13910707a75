"""A ledger as an older release left it: written now, then its later schema steps taken back."""

import sqlite3

import asyncpg

from tests.support.backends import dsn
from tests.support.factories import started, thought
from tests.support.raw_store import raw_store
from thoughtledger import open_ledger
from thoughtledger.ledger.events import LedgerEvent
from thoughtledger.ledger.store.base import MAX_BATCH

SESSION = "older-ledger"
"""The one session of an older ledger."""
SCHEMA_8 = 8
"""The schema version :func:`schema_8_ledger` leaves: the last before the search index."""

BACK_TO_8 = {
    "sqlite": [
        "DROP VIEW tl_session_loops",
        "DROP TABLE tl_loops",
        "DROP TABLE tl_loops_through",
        "DROP TABLE tl_search_through",
        "DROP TRIGGER tl_search_stripped",
        "DROP TABLE tl_search",
        "DELETE FROM tl_schema WHERE version > 8",
    ],
    "postgres": [
        "DROP VIEW tl_session_loops",
        "DROP TABLE tl_loops",
        "DROP TABLE tl_loops_through",
        "DROP TABLE tl_search_through",
        "DROP TRIGGER tl_search_stripped ON tl_events",
        "DROP FUNCTION tl_search_stripped()",
        "DROP TABLE tl_search",
        "DELETE FROM tl_schema WHERE version > 8",
    ],
}


async def schema_8_ledger(url: str, thoughts: int) -> None:
    """A ledger of one session of ``thoughts`` thoughts (``step N wordN``), taken back to schema
    8 as a release before the search index left it."""
    async with open_ledger(url) as ledger:
        events: list[LedgerEvent] = [
            started(),
            *(thought(n, f"step {n} word{n}", total=thoughts) for n in range(1, thoughts + 1)),
        ]
        for start in range(0, len(events), MAX_BATCH):
            await raw_store(ledger).append(
                SESSION, events[start : start + MAX_BATCH], expected_version=start
            )
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
            for statement in BACK_TO_8["sqlite"]:
                db.execute(statement)
        db.close()
        return
    base, schema = url.split("?schema=")
    connection = await asyncpg.connect(dsn(base), server_settings={"search_path": schema})
    try:
        for statement in BACK_TO_8["postgres"]:
            await connection.execute(statement)
    finally:
        await connection.close()


__all__ = ["BACK_TO_8", "SCHEMA_8", "SESSION", "schema_8_ledger"]
