"""The browser view's forks: ``/api/sessions/ID/forks`` and ``/api/sessions/ID/compare``.

Both answer what :class:`thoughtledger.api.Lineage` decides: a principal sees the forks it may
read, as ``show`` and ``thinking_history`` list them, and compares a fork it may read with its
source, whose side is left empty (and said to be unreadable) when the principal may not read
it. Every answer is bounded: :data:`FORKS_LISTED` forks, and each side of a comparison
:data:`thoughtledger.api.COMPARE_THOUGHTS_MAX` thoughts, with the whole counts beside them.
"""

from typing import Any
from urllib.parse import quote

from thoughtledger.api import ForkComparison, Scope
from thoughtledger.ledger.envelope import format_time
from thoughtledger.projections.entries import ThoughtEntry

FORKS_LISTED = 100
"""The most forks a session's page lists (the answer says when there are more)."""

JsonDict = dict[str, Any]


def session_href(session_id: str) -> str:
    """The address of a session's page."""
    return f"/sessions/{quote(session_id, safe='')}"


async def forks_json(scope: Scope, session_id: str) -> JsonDict:
    """The forks of ``session_id`` that the scope's principal may read, oldest first, as JSON.

    Raises:
        InvalidInputError: A malformed id.
        SessionNotFoundError: No such session, or one ``who`` may not read.
        StoreError: The store failed.
    """
    found = await scope.forks(session_id, limit=FORKS_LISTED + 1)
    return {
        "forks": [
            {
                "sessionId": fork.session_id,
                "version": fork.version,
                "agent": fork.agent,
                "startedAt": format_time(fork.started_at),
                "href": session_href(fork.session_id),
            }
            for fork in found[:FORKS_LISTED]
        ],
        "more": len(found) > FORKS_LISTED,
    }


async def compare_json(scope: Scope, fork_id: str, *, limit: int) -> JsonDict:
    """The fork ``fork_id`` beside its source from the fork point on, as JSON.

    Raises:
        InvalidInputError: A malformed id or limit, a session that is no fork, or one too long.
        SessionNotFoundError: No such session, or one ``who`` may not read.
        StoreError: The store failed.
    """
    return _as_json(await scope.compare(fork_id, limit=limit))


def _as_json(found: ForkComparison) -> JsonDict:
    point = found.point
    return {
        "sessionId": found.fork_id,
        "href": session_href(found.fork_id),
        "version": point.version,
        "hash": point.hash,
        "common": found.common,
        "source": {
            "sessionId": point.session_id,
            # The source as it was at the fork point: the prefix both share.
            "href": f"{session_href(point.session_id)}?v={point.version}",
            "readable": found.source_readable,
            "thoughts": [_thought(entry) for entry in found.source_thoughts],
            "total": found.source_total,
        },
        "fork": {
            "thoughts": [_thought(entry) for entry in found.fork_thoughts],
            "total": found.fork_total,
        },
    }


def _thought(entry: ThoughtEntry) -> JsonDict:
    return {
        "number": entry.thought_number,
        "version": entry.version,
        "status": entry.status,
        "branch": entry.branch,
        "revises": entry.revises_thought,
        "text": entry.thought,
        "redacted": entry.redacted,
        "recordedAt": format_time(entry.recorded_at),
    }


__all__ = ["FORKS_LISTED", "compare_json", "forks_json", "session_href"]
