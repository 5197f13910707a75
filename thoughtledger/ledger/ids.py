"""Identifiers: the only place new ids are minted, and the rules ids must follow."""

import os
import re
import time
from uuid import UUID, SafeUUID

import uuid6

from thoughtledger.ledger.errors import InvalidInputError

# Ids end up in URLs, file names and terminal output: a conservative alphabet keeps them safe in all
# three (no path separators, no whitespace, no control characters), while still admitting UUIDs,
# "default" and descriptive ids such as "arch-review-001".
_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")


class _EventIds:
    """UUIDv7 event ids: RFC 9562's method 3 (sub-millisecond clock bits), monotonic per process.

    ``uuid6.uuid7()`` (which mints session ids) moves its timestamp a millisecond forward for each
    id minted within the same millisecond, so under load event ids ran ahead of the clock (12,800
    ids in 0.7 s carried times 13 s in the future), and it reads the OS random source once per id
    (this takes about 60% of its time). Here the 12 bits after the millisecond hold its fraction in
    steps of 256 ns, random bits come from a pooled ``os.urandom`` (dropped after a fork, so a
    child never repeats its parent's), and an id that would not sort after the previous one is
    the previous one plus one.
    """

    _POOL_BYTES = 8192

    def __init__(self) -> None:
        self._pool = b""
        self._at = 0
        self._last = 0
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._pool, self._at, self._last = b"", 0, 0

    def __call__(self) -> UUID:
        at = self._at
        if at + 8 > len(self._pool):
            self._pool, at = os.urandom(self._POOL_BYTES), 0
        self._at = at + 8
        millis, nanos = divmod(time.time_ns(), 1_000_000)
        value = (
            (millis << 80)
            | ((nanos >> 8) << 64)
            | _VERSION_AND_VARIANT
            | (int.from_bytes(self._pool[at : at + 8]) & _RAND_B)
        )
        if value <= self._last:  # two ids within 256 ns, or the clock stepped back
            value = _after(self._last)
        self._last = value
        # What UUID(int=value) does, without its argument checks: value is a valid UUIDv7 by
        # construction, and this runs for every event (0.5 us instead of 1.1 us).
        uuid = _new(UUID)
        _set(uuid, "int", value)
        _set(uuid, "is_safe", SafeUUID.unknown)
        return uuid


_RAND_B = (1 << 62) - 1
_VERSION_AND_VARIANT = (0x7 << 76) | (0x2 << 62)
_new = object.__new__
_set = object.__setattr__


def _after(value: int) -> int:
    """The smallest UUIDv7 above ``value``: its time, fraction and random bits plus one."""
    key = ((value >> 80) << 74) | (((value >> 64) & 0xFFF) << 62) | (value & _RAND_B)
    key += 1
    return (
        ((key >> 74) << 80) | (((key >> 62) & 0xFFF) << 64) | _VERSION_AND_VARIANT | (key & _RAND_B)
    )


new_event_id = _EventIds()
"""Mint a time-ordered event id (UUIDv7)."""


def new_session_id() -> str:
    """Mint a time-ordered session id (UUIDv7, canonical text form)."""
    return str(uuid6.uuid7())


def check_id(value: object, what: str = "session id") -> str:
    """Return ``value`` if it is a valid session or branch id.

    Args:
        value: The candidate id.
        what: How to name the id in the error message.

    Returns:
        The id, unchanged.

    Raises:
        InvalidInputError: ``value`` is not a string of 1-128 characters from
            ``A-Z a-z 0-9 . _ : @ -`` starting with a letter or digit.
    """
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    if _ID_PATTERN.fullmatch(value) is None:
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise InvalidInputError(
            f"invalid {what} {shown!r}: use 1-128 characters from A-Z a-z 0-9 . _ : @ -, "
            "starting with a letter or digit"
        )
    return value


__all__ = ["check_id", "new_event_id", "new_session_id"]
