"""The review queue: ``/api/review``, the thoughts a reviewer works through one by one.

A queue is a filter: the words of a search (``q``), an agent, only thoughts that repeat an
earlier one (``loops``), only thoughts nobody has labelled yet (``unlabelled``). Its items are the
thoughts that pass, newest session first, each with its session, version, number, text and the
labels it has; the page shows them one at a time, a key labels one (an annotation, through the
acts: :mod:`thoughtledger.adapters.ui.acts`) or skips it, and keeps each reviewer's place per
queue. Everything is read as the principal may (its sessions only, an auditor's every one), and
bounded: :data:`REVIEW_ITEMS_MAX` items from at most :data:`REVIEW_SESSIONS_MAX` sessions.
"""

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

from thoughtledger.adapters.ui.payload import JsonDict
from thoughtledger.api import Scope
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.projections.state import SessionState

REVIEW_ITEMS_MAX = 200
"""The most thoughts one queue holds (the page says when there are more)."""
REVIEW_SESSIONS_MAX = 100
"""The most sessions a queue without words reads (newest first)."""

Marks = Callable[[str, int], Awaitable[Sequence[int]]]
"""The versions of a session's thoughts that repeat an earlier one, up to a version."""


@dataclass(frozen=True, slots=True)
class ReviewFilter:
    """What a queue holds.

    Attributes:
        words: A search query (``thoughtledger search``'s words), or ``None``.
        agent: Only sessions of this agent.
        loops: Only thoughts that repeat an earlier thought of their session.
        unlabelled: Only thoughts with no annotation yet.
        since: Only sessions started at or after this time.
    """

    words: str | None = None
    agent: str | None = None
    loops: bool = False
    unlabelled: bool = False
    since: datetime | None = None


async def review_json(scope: Scope, where: ReviewFilter, repeats: Marks) -> JsonDict:
    """The queue's items, as JSON (``{"items": [...], "more": bool}``).

    Raises:
        InvalidInputError: A query with nothing to find.
        StoreError: The store failed.
    """
    sessions = await _sessions(scope, where)
    items: list[JsonDict] = []
    more = False
    for session_id, versions in sessions:
        state = await scope.state(session_id)
        if where.agent is not None and state.metadata.get("agent") != where.agent:
            continue
        looping = set(await repeats(session_id, state.version)) if where.loops else set()
        for item in _items(state, versions, looping, where):
            if len(items) == REVIEW_ITEMS_MAX:
                more = True
                break
            items.append(item)
        if more:
            break
    return {"items": items, "more": more}


async def _sessions(scope: Scope, where: ReviewFilter) -> list[tuple[str, set[int] | None]]:
    """The sessions to look in, and (for a search) the versions of their hits."""
    if where.words:
        found: dict[str, set[int]] = {}
        cursor = None
        while len(found) < REVIEW_SESSIONS_MAX:
            page = await scope.search(
                where.words, agent=where.agent, since=where.since, limit=100, cursor=cursor
            )
            for hit in page.results:
                found.setdefault(hit.session_id, set()).add(hit.version)
            cursor = page.next_cursor
            if cursor is None or sum(map(len, found.values())) >= REVIEW_ITEMS_MAX:
                break
        return [(session_id, versions) for session_id, versions in found.items()]
    if not (where.agent or where.loops or where.unlabelled):
        raise InvalidInputError(
            "a queue needs a filter: words, an agent, loops or unlabelled thoughts"
        )
    listed = await scope.sessions(limit=REVIEW_SESSIONS_MAX)
    return [
        (state.session_id, None)
        for state in listed.sessions
        if where.since is None or (state.started_at is not None and state.started_at >= where.since)
    ]


def _items(
    state: SessionState, versions: set[int] | None, looping: set[int], where: ReviewFilter
) -> list[JsonDict]:
    labels: dict[int, list[str]] = {}
    for annotation in state.annotations:
        labels.setdefault(annotation.thought_number, []).append(annotation.label)
    chosen = []
    for thought in state.thoughts:
        if versions is not None and thought.version not in versions:
            continue
        if where.loops and thought.version not in looping:
            continue
        if where.unlabelled and thought.thought_number in labels:
            continue
        chosen.append(
            {
                "sessionId": state.session_id,
                "version": thought.version,
                "thoughtNumber": thought.thought_number,
                "text": thought.thought,
                "agent": state.metadata.get("agent"),
                "labels": labels.get(thought.thought_number, []),
                "href": f"/sessions/{quote(state.session_id, safe='')}?v={thought.version}",
            }
        )
    return chosen


__all__ = ["REVIEW_ITEMS_MAX", "REVIEW_SESSIONS_MAX", "ReviewFilter", "review_json"]
