"""Spans made from stored rows (no models) are the spans the events' models make, in any log."""

import asyncio
from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property.strategies import events
from thoughtledger.adapters.otel.log import LogTraces
from thoughtledger.adapters.otel.spans import Conventions, SpanData, session_spans
from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.envelope import EventRow, RecordedEvent
from thoughtledger.ledger.events import LedgerEvent
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.projections.event_fields import event_fields

_ENVELOPE = ("type", "schema_version")


@settings(max_examples=200, deadline=None)
@given(st.lists(events, min_size=1, max_size=6))
def test_the_fields_read_from_a_payload_are_the_fields_of_its_model(
    log: list[LedgerEvent],
) -> None:
    records = asyncio.run(_append({"s": log}))
    for record in records:
        fields = event_fields(EventRow.of(record))
        expected = record.event.model_dump(exclude_none=True)
        assert fields == {k: v for k, v in expected.items() if k not in _ENVELOPE}
        # Equal, and of the same types (1 == 1.0 == True in Python).
        assert _types(fields) == _types({k: v for k, v in expected.items() if k not in _ENVELOPE})


def test_a_whole_number_where_the_model_has_a_float_is_read_as_the_model_reads_it() -> None:
    payload = (
        '{"thought":"t","thought_number":1,"total_thoughts":1,"next_thought_needed":false,'
        '"kind":"thought.recorded","guidance":"g","generation":{"model":"m","provider":"local",'
        '"temperature":1,"prompt_sha256":"' + "0" * 64 + '","context_version":0,'
        '"structured":true,"cost":0,"latency_ms":5,"attempts":1}}'
    )
    row = EventRow(
        1,
        "s",
        2,
        "e",
        "2024-05-01T00:00:00.000000Z",
        1,
        "thought.generated",
        payload,
        "0" * 64,
        "1" * 64,
    )
    generation = event_fields(row)["generation"]
    model = decode_payload("thought.generated", 1, payload).model_dump()["generation"]
    assert (
        (generation["temperature"], generation["cost"])
        == (1.0, 0.0)
        == (
            model["temperature"],
            model["cost"],
        )
    )
    assert type(generation["temperature"]) is float
    assert type(generation["cost"]) is float


def _types(value: object) -> object:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    return type(value)


async def _append(sessions: dict[str, list[LedgerEvent]]) -> list[RecordedEvent]:
    """Append each session's events, one event at a time, sessions taking turns."""
    store = MemoryEventStore()
    versions = dict.fromkeys(sessions, 0)
    turn = 0
    while any(versions[name] < len(log) for name, log in sessions.items()):
        for name, log in sessions.items():
            if versions[name] < len(log) and (turn + len(name)) % 3 != 0:
                await store.append(name, [log[versions[name]]], expected_version=versions[name])
                versions[name] += 1
        turn += 1
    return await store.read_all(limit=10_000)


def _key(span: SpanData) -> tuple[int, int]:
    return span.trace_id, span.span_id


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(events, min_size=1, max_size=6), min_size=1, max_size=4),
    st.integers(min_value=1, max_value=7),
    st.lists(st.integers(min_value=0, max_value=6), min_size=4, max_size=4),
    st.booleans(),
)
def test_folding_the_interleaved_log_page_by_page_makes_each_sessions_spans(
    logs: list[list[LedgerEvent]], page: int, cuts: list[int], capture: bool
) -> None:
    sessions = {f"s{index}": log for index, log in enumerate(logs)}
    records = asyncio.run(_append(sessions))
    # Each session is exported up to a version of its own (its head when the export began).
    heads = {
        name: max(1, len(log) - cuts[index]) for index, (name, log) in enumerate(sessions.items())
    }
    conventions = Conventions(capture_content=capture)
    fold = LogTraces(heads, conventions)
    rows = [EventRow.of(record) for record in records]
    ours: list[SpanData] = []
    for start in range(0, len(rows), page):
        ours += fold.fold(rows[start : start + page])
    ours += fold.rest()
    assert fold.finished == len(sessions)
    expected: list[SpanData] = []
    for name in sessions:
        stream: Sequence[RecordedEvent] = [r for r in records if r.session_id == name]
        expected += session_spans(stream[: heads[name]], conventions)
    assert sorted(ours, key=_key) == sorted(expected, key=_key)
