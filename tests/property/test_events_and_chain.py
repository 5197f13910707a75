"""Properties of events and of the hash chain."""

import hashlib
import json
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from tests.property.strategies import events
from thoughtledger.ledger.chain import (
    GENESIS_HASH,
    StoredRow,
    compute_hash,
    prepare,
    seal,
    verify_rows,
)
from thoughtledger.ledger.codec import decode_payload, encode_payload, event_type_of
from thoughtledger.ledger.events import LedgerEvent
from thoughtledger.ledger.ids import new_event_id


@given(events)
def test_every_event_survives_a_json_round_trip(event: LedgerEvent) -> None:
    payload = encode_payload(event)
    assert decode_payload(event_type_of(event), event.schema_version, payload) == event


@given(
    texts=st.lists(st.text(), min_size=5, max_size=5),
    numbers=st.lists(st.integers(min_value=0, max_value=2**40), min_size=2, max_size=2),
    payload=st.text(),
)
def test_the_hash_header_is_the_canonical_json_array(
    texts: list[str], numbers: list[int], payload: str
) -> None:
    prev, session, event_id, moment, event_type = texts
    version, schema_version = numbers
    header = json.dumps(
        [prev, session, version, event_id, moment, event_type, schema_version],
        ensure_ascii=True,
        separators=(",", ":"),
    )
    reference = hashlib.sha256(header.encode("ascii") + b"\n" + payload.encode("utf-8", "replace"))
    assert (
        compute_hash(
            prev_hash=prev,
            session_id=session,
            version=version,
            event_id=event_id,
            recorded_at=moment,
            event_type=event_type,
            schema_version=schema_version,
            payload=payload.encode("utf-8", "replace").decode("utf-8"),
        )
        == reference.hexdigest()
    )


def _rows(history: list[LedgerEvent]) -> list[StoredRow]:
    prepared = prepare(history, max_event_bytes=1 << 20)
    sealed = seal(
        "s",
        prepared,
        version=0,
        head_hash=GENESIS_HASH,
        event_ids=[new_event_id() for _ in prepared],
        recorded_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    return [
        StoredRow(
            position=n,
            session_id=item.session_id,
            version=item.version,
            event_id=str(item.event_id),
            recorded_at=item.recorded_at_text,
            schema_version=item.schema_version,
            event_type=item.event_type,
            payload=item.payload,
            prev_hash=item.prev_hash,
            hash=item.hash,
        )
        for n, item in enumerate(sealed, start=1)
    ]


histories = st.lists(events, min_size=1, max_size=8)


@given(histories)
def test_the_chain_verifies_after_any_history(history: list[LedgerEvent]) -> None:
    rows = _rows(history)
    report = verify_rows("s", rows, (len(rows), rows[-1].hash))
    assert report.ok
    assert report.checked == len(history)


_FIELDS = [
    "session_id",
    "version",
    "event_id",
    "recorded_at",
    "schema_version",
    "event_type",
    "payload",
    "prev_hash",
    "hash",
]


@given(histories, st.data())
def test_any_single_field_tamper_is_detected_at_that_event(
    history: list[LedgerEvent], data: st.DataObject
) -> None:
    rows = _rows(history)
    index = data.draw(st.integers(0, len(rows) - 1), label="event")
    name = data.draw(st.sampled_from(_FIELDS), label="field")
    value = getattr(rows[index], name)
    tampered: object = (value + 1) if isinstance(value, int) else (value + "x")
    rows[index] = rows[index]._replace(**{name: tampered})  # type: ignore[arg-type]
    report = verify_rows("s", rows, (len(rows), rows[-1].hash))
    assert not report.ok
    assert report.first_bad_version == index + 1  # the tampered event's true version


@given(histories, st.data())
def test_deleting_or_swapping_events_is_detected(
    history: list[LedgerEvent], data: st.DataObject
) -> None:
    rows = _rows(history)
    head = (len(rows), rows[-1].hash)
    index = data.draw(st.integers(0, len(rows) - 1))
    deleted = rows[:index] + rows[index + 1 :]
    assert not verify_rows("s", deleted, head).ok
    if len(rows) > 1:
        i = min(index, len(rows) - 2)
        swapped = [*rows[:i], rows[i + 1], rows[i], *rows[i + 2 :]]
        assert not verify_rows("s", swapped, head).ok


def test_a_recomputed_chain_with_a_stale_head_is_refused() -> None:
    # An attacker who rewrites an event and recomputes every hash after it still leaves the
    # recorded head pointing at the old last hash.
    from tests.support.factories import thought

    original = _rows([thought(1), thought(2), thought(3)])
    forged = _rows([thought(1), thought(2, "forged"), thought(3)])
    report = verify_rows("s", forged, (len(original), original[-1].hash))
    assert not report.ok
