"""Small builders of events for tests."""

from ledger.events import SessionStarted, ThoughtRecorded


def thought(number: int = 1, text: str | None = None, *, total: int = 5) -> ThoughtRecorded:
    return ThoughtRecorded(
        thought=text if text is not None else f"thought {number}",
        thought_number=number,
        total_thoughts=max(total, number),
        next_thought_needed=True,
    )


def started(**metadata: str) -> SessionStarted:
    return SessionStarted(metadata=metadata)
