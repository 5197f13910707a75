"""Pages of sessions, newest first: the page a listing answers and the cursor to the next one.

A cursor names the last session of a page by its start time and id (``<time>~<id>``: neither
holds a ``~``, and a cursor fits in a URI path segment), so pages stay put while new sessions
arrive at the top.
"""

from dataclasses import dataclass
from datetime import datetime

from ledger.envelope import format_time, parse_time
from ledger.errors import InvalidInputError
from ledger.ids import check_id
from projections.state import SessionState

DEFAULT_PAGE = 100
"""Sessions in a page unless the caller asks for another number."""
MAX_PAGE = 1000
"""The most sessions one page holds."""


@dataclass(frozen=True, slots=True)
class SessionsPage:
    """One page of a listing, newest session first.

    Attributes:
        sessions: The sessions' current facts (their latest thoughts only: see
            :meth:`api.service.Ledger.facts`).
        next_cursor: Pass it back for the next, older page; ``None`` on the last page.
    """

    sessions: list[SessionState]
    next_cursor: str | None


def cursor_of(started_at: datetime, session_id: str) -> str:
    """The cursor after a session that started at ``started_at``."""
    return f"{format_time(started_at)}~{session_id}"


def parse_cursor(cursor: str) -> tuple[datetime, str]:
    """Read a cursor back into ``(started_at, session_id)``.

    Raises:
        InvalidInputError: It is not a cursor a listing gave.
    """
    text, _, session_id = cursor.partition("~")
    try:
        moment = parse_time(text)
        if moment.tzinfo is not None:
            return moment, check_id(session_id)
    except (ValueError, InvalidInputError):
        pass
    raise InvalidInputError(
        f"{cursor[:80]!r} is not a cursor of this listing: pass the nextCursor a page gave"
    )


def check_page_size(limit: int) -> int:
    """Return ``limit`` if it is a page size a listing serves.

    Raises:
        InvalidInputError: Below 1 or above :data:`MAX_PAGE`.
    """
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"limit must be between 1 and {MAX_PAGE}, not {limit}")
    return limit


__all__ = [
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "SessionsPage",
    "check_page_size",
    "cursor_of",
    "parse_cursor",
]
