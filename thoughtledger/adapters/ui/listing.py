"""The sessions list with filters: pages of ``Ledger.recent_sessions``, filtered as they come.

The ledger pages sessions newest first in SQL; agent, client, status and time are read from
each session's facts, so a filtered page scans at most :data:`SCAN_CAP` sessions and, when it
stops short, answers a cursor to go on from (a rare agent never makes one request slow).
"""

from dataclasses import dataclass
from datetime import datetime

from thoughtledger.adapters.ui.payload import JsonDict, session_row
from thoughtledger.api import Scope
from thoughtledger.projections.state import SessionState

SCAN_CAP = 2000
"""The most sessions one filtered page reads before answering what it found."""

_FINISHED = ("complete", "cleared", "expired")


@dataclass(frozen=True, slots=True)
class SessionFilter:
    """What the sessions list keeps; ``None`` keeps everything.

    Attributes:
        agent: The agent named when the session started.
        client: The client software that started it.
        status: A session status, or ``open`` for any not complete, cleared or expired.
        since: Started at or after this (aware) time.
        until: Started before this (aware) time.
    """

    agent: str | None = None
    client: str | None = None
    status: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def keeps(self, state: SessionState) -> bool:
        """Whether ``state`` passes every filter given."""
        started = state.started_at
        checks = (
            self.agent is None or state.metadata.get("agent") == self.agent,
            self.client is None or state.metadata.get("client") == self.client,
            self.until is None or (started is not None and started < self.until),
            self._status_kept(state.status),
        )
        return all(checks)

    def _status_kept(self, status: str) -> bool:
        if self.status is None:
            return True
        if self.status == "open":
            return status not in _FINISHED
        return status == self.status


async def sessions_page(
    scope: Scope,
    *,
    limit: int,
    cursor: str | None,
    where: SessionFilter,
) -> JsonDict:
    """A page of sessions, newest first, that pass ``where``, and the cursor to the next.

    Args:
        scope: The ledger as the caller may read it (its sessions only are listed).
        limit: The most rows to answer.
        cursor: Where the page before ended (``None``: the newest).
        where: The filters.

    Raises:
        InvalidInputError: A limit out of range or a cursor no listing gave.
        StoreError: The store failed.
    """
    rows: list[JsonDict] = []
    scanned = 0
    while True:
        page = await scope.sessions(limit=limit, cursor=cursor)
        ended = False
        for state in page.sessions:
            scanned += 1
            if where.since is not None and (
                state.started_at is None or state.started_at < where.since
            ):
                ended = True  # newest first: every later session started earlier still
                break
            if where.keeps(state):
                rows.append(session_row(state))
        cursor = None if ended else page.next_cursor
        if len(rows) >= limit or cursor is None or scanned >= SCAN_CAP:
            break
    return {"sessions": rows, "next": cursor, "scanned": scanned}


async def sessions_total(scope: Scope, where: SessionFilter) -> int | None:
    """How many sessions the list holds in all (``None`` when filtered by status).

    The figures' count, which takes every filter but the status (a session's status is not
    among the figures). It reads every session's row, so the page asks for it apart from the
    list (``/api/total``), once, after the first page is drawn.

    Raises:
        InvalidInputError: A malformed filter.
        StoreError: The store failed.
    """
    if where.status is not None:
        return None
    figures = await scope.figures(
        since=where.since, until=where.until, agent=where.agent, client=where.client
    )
    return figures.overall.sessions


__all__ = ["SCAN_CAP", "SessionFilter", "sessions_page", "sessions_total"]
