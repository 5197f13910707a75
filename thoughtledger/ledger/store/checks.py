"""The checks of the arguments every backend runs before it reads or appends."""

from collections.abc import Sequence
from uuid import UUID

from thoughtledger.ledger.errors import InvalidInputError

MAX_BATCH = 10_000
"""Most events one append (or one import) may carry."""


def check_window(after: int, to: int | None, limit: int | None = None) -> None:
    """Validate a version window, and the most events to read of it.

    Raises:
        InvalidInputError: ``after`` is negative, ``to`` is below ``after``, or ``limit`` is
            below 1.
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInputError("limit must be an integer >= 1")
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise InvalidInputError("after_version must be an integer >= 0")
    if to is not None and (isinstance(to, bool) or not isinstance(to, int) or to < after):
        raise InvalidInputError("to_version must be an integer >= after_version")


def check_page(after_position: int, limit: int) -> None:
    """Validate a page of :meth:`~thoughtledger.ledger.store.base.EventStore.read_all`.

    Raises:
        InvalidInputError: A negative position or a limit below 1.
    """
    if isinstance(after_position, bool) or not isinstance(after_position, int):
        raise InvalidInputError("after_position must be an integer")
    if after_position < 0:
        raise InvalidInputError("after_position must be >= 0")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInputError("limit must be an integer >= 1")


def check_ids(event_ids: Sequence[UUID], count: int) -> list[UUID]:
    """Validate the event ids given for an append of ``count`` events.

    Raises:
        InvalidInputError: Not one UUID per event, or the same id twice.
    """
    ids = list(event_ids)
    if len(ids) != count:
        raise InvalidInputError(f"got {len(ids)} event ids for {count} events")
    if not all(isinstance(event_id, UUID) for event_id in ids):
        raise InvalidInputError("event ids must be UUIDs")
    if len(set(ids)) != len(ids):
        raise InvalidInputError("event ids within one append must be distinct")
    return ids


__all__ = ["MAX_BATCH", "check_ids", "check_page", "check_window"]
