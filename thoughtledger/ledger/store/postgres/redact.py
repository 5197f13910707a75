"""The PostgreSQL backend's removal of redacted texts (see :mod:`.ledger.store.redaction`).

Which payloads to replace is decided by the shared rules; this replaces them, on a held writer
connection.

An ``UPDATE`` in PostgreSQL writes a new row version and leaves the old one, text and all, in the
table until ``VACUUM`` reclaims it; so the strip is followed by ``VACUUM tl_events`` (outside any
transaction, as it must run), by ``VACUUM tl_search`` (the search index's old rows) and by
``REINDEX INDEX CONCURRENTLY tl_search_doc`` (``VACUUM`` leaves a word no row holds any more as
a key of the GIN index), unless the caller leaves that to the operator. What these do not reach
(the write-ahead log and its archives, backups, replicas, freed disk space) is the operator's to
purge (see docs/redaction.md).
"""

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from thoughtledger.ledger.errors import StoreError, StoreUnavailableError
from thoughtledger.ledger.store.postgres.search_follow import LOCK
from thoughtledger.ledger.store.redaction import Stripping

STRIP = "UPDATE tl_events SET payload = $1 WHERE position = $2 AND payload = $3"


async def strip(
    writer: AbstractAsyncContextManager[Any],
    where: str,
    changes: Sequence[Stripping],
    *,
    vacuum: bool,
) -> int:
    """Replace each payload still stored as ``old`` by ``new`` in one transaction, then vacuum.

    Args:
        writer: A held writer connection's driver, lent by the store once checked writable.
        where: How to name the database in error messages.
        changes: What to replace (see :func:`~thoughtledger.ledger.store.redaction.strippings`).
        vacuum: Run the two ``VACUUM`` and the ``REINDEX`` above afterwards.

    Returns:
        How many payloads were replaced.

    Raises:
        StoreError: The backend failed; nothing was changed (or, when only ``VACUUM`` failed,
            the message says so).
    """
    import asyncpg

    doing = "redacting in"
    try:
        async with writer as driver:
            async with driver.transaction():
                # The index's turn: a catch-up under way ends first (its words of the text are
                # then taken out by the trigger below), and none starts before this commits.
                await driver.execute(LOCK)
                stripped = 0
                for change in changes:
                    status = await driver.execute(STRIP, change.new, change.position, change.old)
                    stripped += int(status.rsplit(" ", 1)[-1])  # "UPDATE <count>"
            if vacuum:
                doing = "the text is gone from every read, but VACUUM tl_events (run it) in"
                await driver.execute("VACUUM tl_events")
                # The search index's trigger replaced the thought's words; the old row stays
                # until vacuumed, like the payload's.
                await driver.execute("VACUUM tl_search")
                if stripped:
                    # VACUUM takes a deleted row out of the GIN index's posting lists but keeps
                    # its words as keys of the index's entry tree: only a rebuild drops them
                    # (concurrently: searches and the index's catch-ups go on meanwhile).
                    doing = "the text is gone from every read, but REINDEX tl_search_doc in"
                    await driver.execute("REINDEX INDEX CONCURRENTLY tl_search_doc")
    except asyncpg.PostgresError as exc:  # the driver's errors are translated right here
        raise StoreError(f"{doing} {where} failed: {exc}") from exc
    except OSError as exc:  # TimeoutError included
        raise StoreUnavailableError(f"cannot reach {where}: {exc}") from exc
    return stripped


__all__ = ["STRIP", "strip"]
