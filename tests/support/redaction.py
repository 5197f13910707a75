"""A redaction cut short after its event: the state a crash between its two steps leaves.

A redaction appends its ``thought.redacted`` events first and strips the texts after; a crash in
between leaves the text stored with the redaction recorded. Only another writer (or that crash)
produces it, so the tests write the first step alone, below the facade.
"""

from tests.support.raw_store import raw_store
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.events import ThoughtEvent, ThoughtRedacted


async def record_redaction_only(ledger: Ledger, session_id: str, version: int) -> None:
    """Append the ``thought.redacted`` event naming the thought at ``version``; strip nothing.

    Raises:
        AssertionError: The session has no thought at ``version``.
    """
    store = raw_store(ledger)
    stream = await store.read_stream(session_id)
    target = stream[version - 1]
    assert isinstance(target.event, ThoughtEvent), target.event_type
    redaction = ThoughtRedacted(
        event_id=str(target.event_id),
        version=version,
        thought_number=target.event.thought_number,
        by="ops",
        reason="cut short after its event",
    )
    await store.append(session_id, [redaction], expected_version=len(stream))


__all__ = ["record_redaction_only"]
