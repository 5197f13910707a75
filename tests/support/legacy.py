"""Events as thoughtledger wrote them before payload schema 2: every field at the top level.

A ledger written by an older release holds such events; a store of this release records them
losslessly through ``import_records`` (hashes and all), which is how the tests put them in place.
"""

import uuid
from datetime import UTC, datetime, timedelta

from tests.support.factories import thought
from thoughtledger.ledger.chain import GENESIS_HASH, compute_hash
from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.envelope import RecordedEvent, format_time
from thoughtledger.ledger.events import LedgerEvent, SessionStarted

LEGACY_SCHEMA = 1


def legacy_payload(event: LedgerEvent) -> str:
    """The stored payload schema 1 gave ``event`` (its fields, as the old encoder wrote them)."""
    return event.model_dump_json(exclude={"type", "schema_version"}, exclude_none=True)


def legacy_session(session_id: str, texts: list[str]) -> list[RecordedEvent]:
    """A session of schema-1 events: its start, then one thought per text, chained."""
    events: list[LedgerEvent] = [SessionStarted(metadata={"agent": "old"})]
    events += [thought(n, text=text, total=len(texts)) for n, text in enumerate(texts, start=1)]
    start = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    records: list[RecordedEvent] = []
    prev = GENESIS_HASH
    for version, event in enumerate(events, start=1):
        moment = start + timedelta(seconds=version)
        event_id = uuid.uuid4()
        payload = legacy_payload(event)
        digest = compute_hash(
            prev_hash=prev,
            session_id=session_id,
            version=version,
            event_id=str(event_id),
            recorded_at=format_time(moment),
            event_type=event.type,
            schema_version=LEGACY_SCHEMA,
            payload=payload,
        )
        records.append(
            RecordedEvent(
                position=0,
                session_id=session_id,
                version=version,
                event_id=event_id,
                recorded_at=moment,
                schema_version=LEGACY_SCHEMA,
                event_type=event.type,
                payload=payload,
                prev_hash=prev,
                hash=digest,
                event=decode_payload(event.type, LEGACY_SCHEMA, payload),
            )
        )
        prev = digest
    return records


__all__ = ["LEGACY_SCHEMA", "legacy_payload", "legacy_session"]
