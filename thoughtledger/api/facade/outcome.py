"""What recording one thought produced: the value the facade, its handles and its callers share."""

from dataclasses import dataclass

from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.projections.state import SessionState, ThoughtEntry


@dataclass(frozen=True, slots=True)
class ThinkOutcome:
    """What one recorded thought produced.

    Attributes:
        session_id: The session the thought landed in (a new one after a clear or expiry).
        state: The session after the thought.
        entry: The thought as recorded.
        recorded: Every event appended by this call, in order (a retired session's ``cleared``
            or ``expired`` event first, when there was one).
        replaced_session_id: The session this call retired, if any.
    """

    session_id: str
    state: SessionState
    entry: ThoughtEntry
    recorded: list[RecordedEvent]
    replaced_session_id: str | None = None


__all__ = ["ThinkOutcome"]
