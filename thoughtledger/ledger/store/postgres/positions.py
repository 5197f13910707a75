"""Gap-safe positions in PostgreSQL: how they are numbered, and what a reader may see of them.

A position is ``(transaction id << POSITION_SHIFT) + n`` (see
:mod:`thoughtledger.ledger.store.postgres.store`): a reader of the log only sees positions below the
oldest transaction still in flight (:func:`visible_below`), and a subscription asks whether
committed events wait beyond them (:func:`held_back`).
"""

from collections.abc import Awaitable, Callable
from typing import Any

import sqlalchemy as sa

from thoughtledger.ledger.store.checks import MAX_BATCH
from thoughtledger.ledger.store.schema import events as EVENTS

POSITION_SHIFT = 16
"""Bits of a position that number events within one transaction."""

assert MAX_BATCH < 1 << POSITION_SHIFT  # noqa: S101  # one append never overflows its slot


def visible_below() -> sa.ColumnElement[bool]:
    """Return the condition limiting reads of the log to positions no commit can still precede."""
    xmin = sa.cast(
        sa.cast(sa.func.pg_snapshot_xmin(sa.func.pg_current_snapshot()), sa.Text),
        sa.BigInteger,
    )
    shift = sa.cast(sa.literal(POSITION_SHIFT), sa.Integer)
    return EVENTS.c.position < xmin.op("<<")(shift)


async def held_back(
    fetch: Callable[["sa.Select[Any]"], Awaitable[list["sa.Row[Any]"]]], cursor: int
) -> bool:
    """Whether committed events follow ``cursor`` that a read of the log cannot return yet.

    Raises:
        StoreError: The read failed.
    """
    last = await fetch(sa.select(sa.func.max(EVENTS.c.position)))
    return last[0][0] is not None and last[0][0] > cursor


__all__ = ["POSITION_SHIFT", "held_back", "visible_below"]
