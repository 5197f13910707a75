"""A session's figures from its stored rows: revisions, thoughts a model wrote, and their cost.

What a sessions-list badge shows. A badge may be asked of a long session, so the session is read
a window of rows at a time and each window folded (without decoding, see
:mod:`thoughtledger.projections.fastfold`) in a worker thread: the event loop serves other
requests between the reads, and only one window's events are held at a time.
"""

import asyncio
from dataclasses import dataclass

from thoughtledger.ledger.envelope import EventRow, LogRow
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.projections.fastfold import fold_rows
from thoughtledger.projections.state import SessionState, empty

FIGURES_WINDOW = 1000
"""Events read, then folded, at once."""


@dataclass(frozen=True, slots=True)
class SessionFigures:
    """What is counted over a session's own thoughts, added up window by window.

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


def add_window(figures: SessionFigures, session_id: str, rows: list[EventRow]) -> SessionFigures:
    """``figures`` with a window of the session's rows counted (pure; run in a thread).

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
    return SessionFigures(revisions, figures.generated + generated, cost, costed)


async def session_figures(
    store: EventStore, session_id: str, *, to_version: int, window: int = FIGURES_WINDOW
) -> SessionFigures:
    """Count a session's figures up to ``to_version``, a window of rows at a time.

    Raises:
        InvalidInputError: A malformed session id.
        EventDecodingError: A stored event cannot be read.
        StoreError: The store failed.
    """
    figures = SessionFigures()
    after = 0
    while after < to_version:
        records = await store.read_stream(
            session_id, after_version=after, to_version=min(after + window, to_version)
        )
        if not records:
            break
        rows = [EventRow.of(record) for record in records]
        figures = await asyncio.to_thread(add_window, figures, session_id, rows)
        after = records[-1].version
    return figures


__all__ = ["FIGURES_WINDOW", "SessionFigures", "add_window", "session_figures"]
