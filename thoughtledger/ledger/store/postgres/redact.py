"""The PostgreSQL backend's removal of redacted texts (see :mod:`.ledger.store.redaction`).

Which payloads to replace is decided by the shared rules; this replaces them, on a held writer
connection.

An ``UPDATE`` in PostgreSQL writes a new row version and leaves the old one, text and all, in the
table until ``VACUUM`` reclaims it; so the strip is followed by ``VACUUM tl_events`` (outside any
transaction, as it must run), and by ``VACUUM tl_search`` (the search index's old rows),
unless the caller leaves that to the operator. What ``VACUUM`` does
not reach (the write-ahead log and its archives, backups, replicas) is the operator's to purge.
"""

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from thoughtledger.ledger.errors import StoreError, StoreUnavailableError
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
        vacuum: Run ``VACUUM tl_events`` afterwards.

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
    except asyncpg.PostgresError as exc:  # the driver's errors are translated right here
        raise StoreError(f"{doing} {where} failed: {exc}") from exc
    except OSError as exc:  # TimeoutError included
        raise StoreUnavailableError(f"cannot reach {where}: {exc}") from exc
    return stripped


__all__ = ["STRIP", "strip"]
