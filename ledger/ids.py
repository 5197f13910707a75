"""Identifiers: the only place new ids are minted, and the rules ids must follow."""

import re
from uuid import UUID

import uuid6

from ledger.errors import InvalidInputError

# Ids end up in URLs, file names and terminal output: a conservative alphabet keeps them safe in all
# three (no path separators, no whitespace, no control characters), while still admitting UUIDs,
# "default" and descriptive ids such as "arch-review-001".
_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")


def new_event_id() -> UUID:
    """Mint a time-ordered event id (UUIDv7)."""
    return uuid6.uuid7()


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
