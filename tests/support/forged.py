"""Chains sealed by hand, as a hostile or foreign writer could: what no store of ours records.

A store never records a time before its session's last one, so a test of what an import refuses
(time going backwards) writes such a chain itself, with every hash recomputed so that only the
times are wrong.
"""

import dataclasses
from collections.abc import Sequence
from datetime import datetime

from thoughtledger.ledger.chain import StoredRow, compute_hash
from thoughtledger.ledger.content import CONTENT_MARK, DIGEST_PREFIX, content_digest, strip
from thoughtledger.ledger.envelope import RecordedEvent

Line = dict[str, object]


def resealed(records: Sequence[RecordedEvent], times: Sequence[datetime]) -> list[RecordedEvent]:
    """Give one session's records (in version order) these recorded times, chained anew."""
    chained: list[RecordedEvent] = []
    prev = records[0].prev_hash
    for record, moment in zip(records, times, strict=True):
        moved = dataclasses.replace(record, recorded_at=moment, prev_hash=prev)
        prev = StoredRow.of(moved).digest()
        chained.append(dataclasses.replace(moved, hash=prev))
    return chained


def redigested(payload: str) -> str:
    """``payload`` with its content digest recomputed after an edit (others pass as they are).

    What a forger who knows the redactable layout (payload schema 2) does to an edited thought,
    so that only the chain or a checkpoint can catch it.
    """
    mark = payload.rfind(CONTENT_MARK)
    if not payload.startswith(DIGEST_PREFIX) or mark < 0:
        return payload
    salt_at = mark + len(CONTENT_MARK)
    salt = payload[salt_at : salt_at + 32]
    digest = content_digest(salt, "{" + payload[salt_at + 34 : -1])
    return DIGEST_PREFIX + digest + payload[len(DIGEST_PREFIX) + 64 :]


def hashed_form(event_type: str, schema_version: int, payload: str) -> str:
    """What the hash of an event covers of its payload (its committed form)."""
    row = StoredRow(0, "", 0, "", "", schema_version, event_type, payload, "", "")
    return strip(payload) if row.redactable else payload


def resealed_lines(lines: Sequence[Line]) -> list[Line]:
    """Recompute the hash chain of one session's export lines (in version order) after edits."""
    chained: list[Line] = []
    prev = str(lines[0]["prev_hash"])
    for line in lines:
        digest = compute_hash(
            prev_hash=prev,
            session_id=str(line["session_id"]),
            version=int(str(line["version"])),
            event_id=str(line["event_id"]),
            recorded_at=str(line["recorded_at"]),
            event_type=str(line["event_type"]),
            schema_version=int(str(line["schema_version"])),
            payload=hashed_form(
                str(line["event_type"]), int(str(line["schema_version"])), str(line["payload"])
            ),
        )
        chained.append({**line, "prev_hash": prev, "hash": digest})
        prev = digest
    return chained
