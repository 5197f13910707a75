"""Where a session came from and what was forked from it, as ``show`` prints them."""

from typing import Any

from thoughtledger.ledger.printable import visible
from thoughtledger.projections.state import SessionState


def lineage_json(state: SessionState, forks: list[str]) -> dict[str, Any]:
    """The session's fork point (``None`` when it is no fork) and its forks' ids, as JSON."""
    point = state.fork
    return {
        "forkOf": None
        if point is None
        else {"sessionId": point.session_id, "version": point.version, "hash": point.hash},
        "inheritedThoughts": sum(1 for entry in state.thoughts if entry.source is not None),
        "forks": forks,
    }


def lineage_lines(state: SessionState, forks: list[str]) -> list[str]:
    """One line naming the source of a fork, one listing the session's forks (each if any)."""
    lines: list[str] = []
    point = state.fork
    if point is not None:
        inherited = sum(1 for entry in state.thoughts if entry.source is not None)
        lines.append(
            f"forked from {visible(point.session_id)} at version {point.version} "
            f"(hash {point.hash[:12]}): its first {inherited} thoughts are the source's"
        )
    if forks:
        lines.append(f"forks: {', '.join(visible(fork) for fork in forks)}")
    return lines


__all__ = ["lineage_json", "lineage_lines"]
