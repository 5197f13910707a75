"""The sessions list's badges: each session's chain walked, its revisions and cost counted.

A badge reads a whole session, so its work is bounded as the session page's is, and tighter: a
page is one session a person asked for, while a list page asks for up to 50 badges by itself. A
session longer than :data:`BADGE_EVENTS_MAX` events is not read at all, and its badge says so and
names the command that checks it (``thoughtledger verify ID``). A shorter one is counted by the
ledger (``ledger.stats.session_figures``) :data:`BADGE_WINDOW` events at a time, each window
folded in a worker thread: the event loop
serves other requests between the reads (which, on SQLite, run on it), and a badge holds one
window's events, not the session's. The chain walk is the ledger's own (``Ledger.verify``).
One badge is worked out at a time (many at once would only share the CPU and add up their
memory), and a badge is kept by its session's head, so a session that has not moved since costs
one head look-up.
"""

import asyncio
from collections import OrderedDict

from thoughtledger.adapters.ui.payload import JsonDict
from thoughtledger.api import Ledger, SessionFigures, VerifyReport

BADGE_EVENTS_MAX = 10_000
"""The longest session (in events) a badge reads: one export slice (a fifth of the page's)."""
BADGES_MAX = 50
"""The most sessions one request asks badges of (the list shows 50 a page)."""
BADGES_KEPT = 4096
BADGE_WINDOW = 1000
"""Events read at once for a badge: the longest a read keeps the event loop (on SQLite)."""


def badge_json(session_id: str, figures: SessionFigures, report: VerifyReport) -> JsonDict:
    """What a sessions-list row learns once the whole session is read: chain, revisions, cost."""
    return {
        "sessionId": session_id,
        "ok": report.ok,
        "checked": report.checked,
        "reason": report.reason,
        "badVersion": report.first_bad_version,
        "revisions": figures.revisions,
        "cost": round(figures.cost, 8) if figures.costed else None,
        "generated": figures.generated,
    }


def too_long_json(session_id: str, events: int) -> JsonDict:
    """The badge of a session longer than a badge reads: not checked here, and how to."""
    return {
        "sessionId": session_id,
        "ok": None,
        "tooLong": True,
        "events": events,
        "checked": 0,
        "reason": f"{events:,} events, more than the {BADGE_EVENTS_MAX:,} a badge reads: "
        f"check it with thoughtledger verify {session_id}",
        "badVersion": None,
        "revisions": None,
        "cost": None,
        "generated": None,
    }


class Badges:
    """Badges of a ledger's sessions, worked out one at a time and kept by head.

    Args:
        ledger: The ledger the sessions are in.
    """

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._one = asyncio.Lock()
        self._kept: OrderedDict[str, tuple[int, str, JsonDict]] = OrderedDict()

    async def of(self, session_id: str) -> JsonDict | None:
        """The badge of ``session_id`` (a well-formed id), or ``None`` when it has no events.

        Raises:
            StoreError: The store failed.
            EventDecodingError: A stored event cannot be decoded.
        """
        head = await self._ledger.head(session_id)
        if head is None:
            return None
        kept = self._kept.get(session_id)
        if kept is not None and kept[:2] == (head.version, head.hash):
            self._kept.move_to_end(session_id)
            return kept[2]
        if head.version > BADGE_EVENTS_MAX:
            return too_long_json(session_id, head.version)
        async with self._one:
            figures = await self._ledger.stats.session_figures(
                session_id, to_version=head.version, window=BADGE_WINDOW
            )
            report = await self._ledger.verify(session_id)
        badge = badge_json(session_id, figures, report)
        self._kept[session_id] = (head.version, head.hash, badge)
        self._kept.move_to_end(session_id)
        while len(self._kept) > BADGES_KEPT:
            self._kept.popitem(last=False)
        return badge


__all__ = [
    "BADGES_KEPT",
    "BADGES_MAX",
    "BADGE_EVENTS_MAX",
    "BADGE_WINDOW",
    "Badges",
    "badge_json",
    "too_long_json",
]
