"""Checks of the bounds a reader gives to see a session as it was: a version, or a time."""

from datetime import datetime

from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError


def check_version(session_id: str, version: object, last: int) -> int:
    """Return ``version`` when it is a version of a session whose last is ``last``.

    Raises:
        InvalidInputError: Not an integer, below 1, or past the session's end.
    """
    if isinstance(version, bool) or not isinstance(version, int):
        raise InvalidInputError("as_of_version must be an integer")
    if version < 1:
        raise InvalidInputError("as_of_version must be >= 1")
    if version > last:
        raise InvalidInputError(
            f"session {session_id!r} has {last} events; as_of_version {version} is past its end"
        )
    return version


def check_time(moment: object) -> datetime:
    """Return ``moment`` when it is an aware datetime.

    Raises:
        InvalidInputError: Not a datetime, or one without a time zone.
    """
    if not isinstance(moment, datetime):
        raise InvalidInputError("as_of_time must be a datetime")
    if moment.tzinfo is None:
        raise InvalidInputError("as_of_time must carry a time zone (for example UTC)")
    return moment


def not_found(session_id: str) -> SessionNotFoundError:
    """The error that says a ledger holds no session ``session_id``."""
    return SessionNotFoundError(f"no session {session_id!r} in this ledger")


__all__ = ["check_time", "check_version", "not_found"]
