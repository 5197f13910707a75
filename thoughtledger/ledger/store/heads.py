"""A session's head: what the core log and its capabilities answer about where a stream is."""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class StreamHead:
    """The head of a session's stream: its last version and hash, and when it began and moved.

    Attributes:
        session_id: The session.
        version: Its last version (the number of events).
        hash: The hash of its last event.
        started_at: When its first event was recorded.
        updated_at: When its last event was recorded.
    """

    session_id: str
    version: int
    hash: str
    started_at: datetime
    updated_at: datetime


__all__ = ["StreamHead"]
