"""The sessions list's badges: each session's chain walked, its revisions and cost counted.

A badge reads a whole session, so its work is bounded as the session page's is, and tighter: a
page is one session a person asked for, while a list page asks for up to 50 badges by itself. A
session longer than :data:`BADGE_EVENTS_MAX` events is not read at all, and its badge says so and
names the command that checks it (``thoughtledger verify ID``). A shorter one is read
:data:`BADGE_WINDOW` events at a time, each window folded in a worker thread: the event loop
serves other requests between the reads (which, on SQLite, run on it), and a badge holds one
window's events, not the session's. The chain walk is the ledger's own (``Ledger.verify``).
One badge is worked out at a time (many at once would only share the CPU and add up their
memory), and a badge is kept by its session's head, so a session that has not moved since costs
one head look-up.
"""

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from thoughtledger.adapters.ui.payload import JsonDict
from thoughtledger.api import Ledger, VerifyReport
from thoughtledger.ledger.envelope import EventRow, LogRow
from thoughtledger.projections.fastfold import fold_rows
from thoughtledger.projections.state import SessionState, empty

BADGE_EVENTS_MAX = 10_000
"""The longest session (in events) a badge reads: one export slice (a fifth of the page's)."""
BADGES_MAX = 50
"""The most sessions one request asks badges of (the list shows 50 a page)."""
BADGES_KEPT = 4096
BADGE_WINDOW = 1000
"""Events read at once for a badge: the longest a read keeps the event loop (on SQLite)."""


@dataclass(frozen=True, slots=True)
class Figures:
    """What a badge counts over a session's thoughts, added up slice by slice.

    Attributes:
        revisions: Thoughts recorded as revisions.
        generated: Thoughts a model wrote.
        cost: The sum of the models' costs where known (in order, as one sum would add them).
        costed: How many of those thoughts know their cost.
    """

    revisions: int = 0
    generated: int = 0
    cost: float = 0.0
    costed: int = 0


def add_window(figures: Figures, session_id: str, rows: Sequence[EventRow]) -> Figures:
    """``figures`` with a window of the session's events counted (pure; run in a thread).

    Raises:
        EventDecodingError: A row has an unknown type, a newer schema or a malformed payload.
    """
    states: dict[str, SessionState] = {}
    fold_rows(
        (
            LogRow(
                row.position,
                row.session_id,
                row.version,
                row.recorded_at,
                row.schema_version,
                row.event_type,
                row.payload,
            )
            for row in rows
        ),
        states,
    )
    folded = states.get(session_id, empty(session_id))
    cost, costed = figures.cost, figures.costed
    generated = 0
    for entry in folded.thoughts:
        if entry.generation is None:
            continue
        generated += 1
        if entry.generation.cost is not None:
            cost += entry.generation.cost
            costed += 1
    revisions = figures.revisions + folded.revisions
    return Figures(revisions, figures.generated + generated, cost, costed)


def badge_json(session_id: str, figures: Figures, report: VerifyReport) -> JsonDict:
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
            figures = Figures()
            after = 0
            while after < head.version:
                upto = min(after + BADGE_WINDOW, head.version)
                rows = self._ledger.transfer.session_rows(
                    session_id, after_version=after, to_version=upto
                )
                async with contextlib.aclosing(rows):
                    async for window in rows:
                        figures = await asyncio.to_thread(add_window, figures, session_id, window)
                after = upto
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
    "Figures",
    "add_window",
    "badge_json",
    "too_long_json",
]
