"""The PostgreSQL backend's removal of redacted texts (see :mod:`ledger.store.redaction`).

An ``UPDATE`` in PostgreSQL writes a new row version and leaves the old one, text and all, in the
table until ``VACUUM`` reclaims it; so the strip is followed by ``VACUUM tl_events`` (outside any
transaction, as it must run) unless the caller leaves that to the operator. What ``VACUUM`` does
not reach (the write-ahead log and its archives, backups, replicas) is the operator's to purge.
"""

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import sqlalchemy as sa

from thoughtledger.ledger.errors import StoreError, StoreUnavailableError
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.postgres.stats_dialect import PostgresStats
from thoughtledger.ledger.store.redaction import Redactable, Redacted, Stripping
from thoughtledger.ledger.store.schema import events as EVENTS

STRIP = "UPDATE tl_events SET payload = $1 WHERE position = $2 AND payload = $3"


class PostgresRedaction(Redactable):
    """Stripping on a held writer connection (a mixin of the PostgreSQL store)."""

    read_only: bool = False
    _where: str
    _closed: bool

    def _writer(self) -> AbstractAsyncContextManager[Any]:
        raise NotImplementedError  # the store's own

    async def _fetch(self, query: "sa.Select[Any]") -> "list[sa.Row[Any]]":
        raise NotImplementedError  # the store's own

    async def redactions(self, session_id: str) -> tuple[Redacted, ...]:
        """See :meth:`Redactable.redactions` (from the partial index)."""
        check_id(session_id)
        named = sa.cast(PostgresStats().json(EVENTS.c.payload, "version"), sa.BigInteger)
        rows = await self._fetch(
            sa.select(EVENTS.c.version, named)
            .where(EVENTS.c.session_id == session_id, EVENTS.c.event_type == "thought.redacted")
            .order_by(EVENTS.c.version)
        )
        return tuple(map(Redacted._make, rows))

    async def _strip(self, changes: Sequence[Stripping], *, vacuum: bool) -> int:
        import asyncpg

        if self._closed:
            raise StoreError("the store is closed")
        if self.read_only:
            raise StoreError(f"{self._where} was opened read-only; nothing was redacted")
        doing = "redacting in"
        try:
            async with self._writer() as driver:
                async with driver.transaction():
                    stripped = 0
                    for change in changes:
                        status = await driver.execute(
                            STRIP, change.new, change.position, change.old
                        )
                        stripped += int(status.rsplit(" ", 1)[-1])  # "UPDATE <count>"
                if vacuum:
                    doing = "the text is gone from every read, but VACUUM tl_events (run it) in"
                    await driver.execute("VACUUM tl_events")
        except asyncpg.PostgresError as exc:  # the driver's errors are translated right here
            raise StoreError(f"{doing} {self._where} failed: {exc}") from exc
        except OSError as exc:  # TimeoutError included
            raise StoreUnavailableError(f"cannot reach {self._where}: {exc}") from exc
        return stripped


__all__ = ["STRIP", "PostgresRedaction"]
