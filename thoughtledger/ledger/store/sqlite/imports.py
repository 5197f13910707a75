"""Imports into SQLite: checked records written in one transaction on the writer connection.

An import runs between group commits (see :mod:`thoughtledger.ledger.store.sqlite.store`), retried
while another process holds the write lock. A session's head is its last event in the log.
"""

from thoughtledger.ledger.chain import GENESIS_HASH
from thoughtledger.ledger.envelope import RecordedEvent, format_time
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.store.imports import plan_import
from thoughtledger.ledger.store.rows import stored_row
from thoughtledger.ledger.store.sqlite.batch import INSERT_FIRST, SELECT_HEAD
from thoughtledger.ledger.store.sqlite.search_follow import index_waiting
from thoughtledger.ledger.store.sqlite.statements import STATEMENTS
from thoughtledger.ledger.store.sqlite.writer import SqliteWriter
from thoughtledger.ledger.store.stored_forms import hash_bytes, hash_text

_READ_WINDOW = STATEMENTS["read_stream_to"]


async def import_streams(writer: SqliteWriter, streams: dict[str, list[RecordedEvent]]) -> int:
    """Write checked records in one transaction, between group commits, retried while busy.

    Returns:
        How many events were written.

    Raises:
        InvalidInputError: A stored session differs, or an event id is recorded elsewhere.
        StoreError: The store is closed or read-only, or the transaction failed.
        StoreUnavailableError: Another writer kept the lock; nothing was written.
    """
    return await writer.between_commits(
        lambda: _import_now(writer, streams), "nothing was imported, try again"
    )


def _import_now(writer: SqliteWriter, streams: dict[str, list[RecordedEvent]]) -> int:
    """Write checked records in one transaction on the writer connection.

    Raises:
        Busy: Another connection holds the write lock; nothing was done.
        InvalidInputError: A stored session differs, or an event id is recorded elsewhere.
        StoreError: The transaction failed; nothing was written.
    """
    db = writer.begin()
    written = 0
    try:
        for session_id, records in streams.items():
            row = db.execute(SELECT_HEAD, {"session_id": session_id}).fetchone()
            version, head_hash = (row[0], hash_text(row[1])) if row else (0, GENESIS_HASH)
            plan = plan_import(session_id, records, version, head_hash)
            if plan.stored_from:
                window = {
                    "session_id": session_id,
                    "after": plan.stored_from - 1,
                    "to": plan.stored_to,
                }
                plan.check([stored_row(r) for r in db.execute(_READ_WINDOW, window)])
            if not plan.new:
                continue
            db.executemany(
                INSERT_FIRST,
                [
                    (
                        session_id,
                        r.version,
                        r.event_id.bytes,
                        format_time(r.recorded_at),
                        r.schema_version,
                        r.event_type,
                        r.payload,
                        hash_bytes(r.prev_hash),
                        hash_bytes(r.hash),
                    )
                    for r in plan.new
                ],
            )
            written += len(plan.new)
        index_waiting(db)  # imported thoughts are searchable through the index at once
        db.execute("COMMIT")
    except BaseException as exc:
        writer.roll_back_after(
            exc,
            "import into",
            integrity=InvalidInputError(
                f"an imported event id is already recorded for another event ({exc})"
            ),
        )
        raise
    return written


__all__ = ["import_streams"]
