"""Gap-safe positions in PostgreSQL: how they are numbered, and what a reader may see of them.

A position is ``(transaction id << POSITION_SHIFT) + n`` (see
:mod:`thoughtledger.ledger.store.postgres.store`): a reader of the log only sees positions below the
oldest transaction still in flight, and a subscription asks whether committed events wait beyond
them.
"""

import sqlalchemy as sa

from thoughtledger.ledger.store.base import MAX_BATCH
from thoughtledger.ledger.store.schema import events as EVENTS
from thoughtledger.ledger.store.sql import SqlEventStore

POSITION_SHIFT = 16
"""Bits of a position that number events within one transaction."""

assert MAX_BATCH < 1 << POSITION_SHIFT  # noqa: S101  # one append never overflows its slot


class PostgresPositions(SqlEventStore):
    """Which positions the log shows (a base of the PostgreSQL store)."""

    def _visible_below(self) -> sa.ColumnElement[bool]:
        xmin = sa.cast(
            sa.cast(sa.func.pg_snapshot_xmin(sa.func.pg_current_snapshot()), sa.Text),
            sa.BigInteger,
        )
        shift = sa.cast(sa.literal(POSITION_SHIFT), sa.Integer)
        return EVENTS.c.position < xmin.op("<<")(shift)

    async def _held_back(self, cursor: int) -> bool:
        """Whether committed events follow ``cursor`` that :meth:`read_all` cannot return yet.

        Raises:
            StoreError: The read failed.
        """
        last = await self._fetch(sa.select(sa.func.max(EVENTS.c.position)))
        return last[0][0] is not None and last[0][0] > cursor


__all__ = ["POSITION_SHIFT", "PostgresPositions"]
