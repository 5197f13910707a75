"""Listing sessions: pages of them, newest first, with their cursors; a session's facts and owner.

A cursor names the last session of a page by its start time and id (``<time>~<id>``: neither
holds a ``~``, and a cursor fits in a URI path segment), so pages stay put while new sessions
arrive at the top. :class:`thoughtledger.api.Ledger` lists through its private part
:class:`Listing`.
"""

from dataclasses import dataclass
from datetime import datetime

from thoughtledger.api.caches import Held
from thoughtledger.ledger.envelope import format_time, parse_time
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import SessionStarted
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.ledger.store.owners import Owners
from thoughtledger.projections.state import SessionState

DEFAULT_PAGE = 100
"""Sessions in a page unless the caller asks for another number."""
MAX_PAGE = 1000
"""The most sessions one page holds."""


@dataclass(frozen=True, slots=True)
class SessionsPage:
    """One page of a listing, newest session first.

    Attributes:
        sessions: The sessions' current facts (their latest thoughts only: see
            :meth:`thoughtledger.api.Ledger.facts`).
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


class Listing:
    """The ledger's listings and ownership reads.

    Args:
        store: The log.
        owners: The store's listing of one principal's sessions.
        held: The sessions the ledger holds.
    """

    def __init__(self, store: EventStore, owners: Owners, held: Held) -> None:
        self._store = store
        self._owners = owners
        self._held = held

    async def facts(self, session_id: str) -> SessionState | None:
        """Return a session's state as recording holds it (only its latest thoughts), or ``None``.

        Cheap: it reads only what the log gained since this process last looked. For the
        session's facts (owner, status, version, counts), not its history.

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        state = await self._held.load(check_id(session_id), fresh=True)
        return state if state.version else None

    async def list_sessions(
        self, *, limit: int = 100, after_session_id: str | None = None
    ) -> list[SessionState]:
        """Return up to ``limit`` sessions ordered by id, paging after ``after_session_id``.

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The store failed.
        """
        heads = await self._store.list_heads(after_session_id=after_session_id, limit=limit)
        return [await self._held.complete(head.session_id) for head in heads]

    async def recent_sessions(
        self, *, limit: int = DEFAULT_PAGE, cursor: str | None = None, owner: str | None = None
    ) -> SessionsPage:
        """Return a page of sessions, newest first (by start), with the cursor to the next page.

        Args:
            limit: Sessions in the page (1 to :data:`thoughtledger.api.listing.MAX_PAGE`).
            cursor: The ``next_cursor`` of the previous page; ``None`` for the newest.
            owner: Only the sessions this principal started; ``None``: every session.

        Raises:
            InvalidInputError: A limit out of range or a cursor no listing gave.
            StoreError: The store failed.
        """
        before = parse_cursor(cursor) if cursor is not None else None
        page = check_page_size(limit) + 1  # one more says whether a next page exists
        heads = (
            await self._store.recent_heads(before=before, limit=page)
            if owner is None
            else await self._owners.owned_heads(owner, before=before, limit=page)
        )
        more = len(heads) > limit
        heads = heads[:limit]
        states = [state for head in heads if (state := await self.facts(head.session_id))]
        last = heads[-1] if more else None
        return SessionsPage(states, cursor_of(last.started_at, last.session_id) if last else None)

    async def owner_of(self, session_id: str) -> tuple[bool, str | None]:
        """Return whether a session exists and who owns it, from its first event (no fold).

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        cached = self._held.heads.get(check_id(session_id))
        if cached is not None and cached.version:
            return True, cached.owner  # an owner, once recorded, never changes
        first = await self._store.read_stream(session_id, to_version=1)
        if not first:
            return False, None
        event = first[0].event
        return True, event.owner if isinstance(event, SessionStarted) else None


__all__ = [
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "Listing",
    "SessionsPage",
    "check_page_size",
    "cursor_of",
    "parse_cursor",
]
