"""Small builders of events for tests, and of the states the pure projections fold them into."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from thoughtledger.ledger.events import Generation, LedgerEvent, SessionStarted, ThoughtRecorded
from thoughtledger.ledger.store.base import MAX_BATCH, LedgerStore
from thoughtledger.projections.state import SessionState, empty, replay


def thought(number: int = 1, text: str | None = None, *, total: int = 5) -> ThoughtRecorded:
    return ThoughtRecorded(
        thought=text if text is not None else f"thought {number}",
        thought_number=number,
        total_thoughts=max(total, number),
        next_thought_needed=True,
    )


def started(**metadata: str) -> SessionStarted:
    return SessionStarted(metadata=metadata)


GENERATION = Generation(
    model="m",
    provider="local",
    prompt_sha256="0" * 64,
    context_version=1,
    structured=True,
    latency_ms=5,
    attempts=1,
)
"""How a model wrote a thought, with only the figures every generation has."""


START = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
"""When the first event of a folded session is recorded."""

STEP = timedelta(seconds=10)
"""How far apart the events of a folded session are recorded, unless told otherwise."""


@dataclass(frozen=True)
class Folded:
    """An event as the fold reads it: what a store's envelope adds, without hashes or ids."""

    version: int
    position: int
    recorded_at: datetime
    event: LedgerEvent


def recorded(*events: LedgerEvent, times: list[datetime] | None = None) -> list[Folded]:
    """``events`` as versions 1, 2, ... of one session, recorded at ``times`` (or every STEP)."""
    moments = times or [START + STEP * index for index in range(len(events))]
    return [
        Folded(version, version, moment, event)
        for version, (event, moment) in enumerate(zip(events, moments, strict=True), start=1)
    ]


def fold(
    *events: LedgerEvent, session_id: str = "s", times: list[datetime] | None = None
) -> SessionState:
    """The state of a session whose log is ``events`` (see :func:`recorded`)."""
    return replay(recorded(*events, times=times), empty(session_id))


async def long_session(store: LedgerStore, session_id: str, thoughts: int) -> int:
    """Append a session of ``thoughts`` plain thoughts in batches (fast); return its version."""
    events: list[LedgerEvent] = [
        started(),
        *(thought(n, total=thoughts) for n in range(1, 1 + thoughts)),
    ]
    version = 0
    for start in range(0, len(events), MAX_BATCH):
        batch = events[start : start + MAX_BATCH]
        await store.append(session_id, batch, expected_version=version)
        version += len(batch)
    return version
