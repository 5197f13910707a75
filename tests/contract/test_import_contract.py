"""The import contract: every backend keeps imported events exactly as they were recorded."""

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.backends import Backend
from tests.support.factories import started, thought
from tests.support.forged import resealed
from thoughtledger.ledger.chain import compute_hash
from thoughtledger.ledger.envelope import RecordedEvent, format_time
from thoughtledger.ledger.errors import EventDecodingError, IntegrityError, InvalidInputError
from thoughtledger.ledger.events import BranchOpened, SessionCleared
from thoughtledger.ledger.store.base import MAX_BATCH, LedgerStore
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio

START = datetime(2024, 5, 1, 14, 2, 3, 123456, tzinfo=UTC)


class Tick:
    """A clock far from now that moves one second per reading: imported times must survive."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


async def recorded_elsewhere(*sessions: str, thoughts: int = 3) -> list[RecordedEvent]:
    """Events recorded by another ledger (with its own clock), session after session."""
    source = MemoryEventStore(clock=Tick())
    records: list[RecordedEvent] = []
    for session_id in sessions:
        records += await source.append(session_id, [started(agent="a")], expected_version=0)
        for n in range(1, thoughts + 1):
            records += await source.append(session_id, [thought(n)], expected_version=n)
    return records


def without_positions(records: list[RecordedEvent]) -> list[tuple[object, ...]]:
    return [dataclasses.astuple(dataclasses.replace(r, position=0)) for r in records]


async def test_imported_events_keep_their_ids_times_payloads_and_hashes(store: LedgerStore) -> None:
    records = await recorded_elsewhere("s1", "s2")
    assert await store.imports.import_records(records) == len(records)
    for session_id in ("s1", "s2"):
        mine = [r for r in records if r.session_id == session_id]
        stored = await store.read_stream(session_id)
        assert without_positions(stored) == without_positions(mine)
        report = await store.verify(session_id)
        assert (report.ok, report.checked) == (True, len(mine))
        head = await store.stream_head(session_id)
        assert head is not None
        assert (head.version, head.hash) == (mine[-1].version, mine[-1].hash)
        assert (head.started_at, head.updated_at) == (mine[0].recorded_at, mine[-1].recorded_at)


async def test_importing_twice_writes_nothing_the_second_time(store: LedgerStore) -> None:
    records = await recorded_elsewhere("s1", "s2")
    await store.imports.import_records(records)
    before = await store.read_all()
    assert await store.imports.import_records(records) == 0
    assert await store.read_all() == before


async def test_an_import_extends_a_session_that_holds_its_beginning(store: LedgerStore) -> None:
    records = await recorded_elsewhere("s1", thoughts=5)
    assert await store.imports.import_records(records[:3]) == 3
    assert await store.imports.import_records(records) == len(records) - 3
    assert (await store.verify("s1")).checked == len(records)


async def test_a_long_session_can_be_imported_in_consecutive_slices(store: LedgerStore) -> None:
    records = await recorded_elsewhere("s1", thoughts=7)
    for start in range(0, len(records), 3):
        await store.imports.import_records(records[start : start + 3])
    assert without_positions(await store.read_stream("s1")) == without_positions(records)
    assert (await store.verify("s1")).ok


async def test_appends_continue_an_imported_session_on_its_chain(store: LedgerStore) -> None:
    records = await recorded_elsewhere("s1")
    await store.imports.import_records(records)
    more = await store.append("s1", [SessionCleared()], expected_version=len(records))
    assert more[0].prev_hash == records[-1].hash
    assert (await store.verify("s1")).ok


async def test_imported_events_come_after_every_stored_event_in_the_log(store: LedgerStore) -> None:
    mine = await store.append("local", [started(), thought(1)], expected_version=0)
    records = await recorded_elsewhere("s1")
    await store.imports.import_records(records)
    everything = await store.read_all()
    assert [r.session_id for r in everything] == ["local"] * 2 + ["s1"] * len(records)
    positions = [r.position for r in everything]
    assert positions == sorted(set(positions))
    assert positions[0] == mine[0].position


async def test_a_tampered_record_is_refused_and_nothing_is_written(store: LedgerStore) -> None:
    records = await recorded_elsewhere("s1", "s2")
    forged = dataclasses.replace(
        records[-2], payload=records[-2].payload.replace('"thought 2"', '"thought X"')
    )
    with pytest.raises(IntegrityError, match=r"'s2' version 3 .*content does not match its digest"):
        await store.imports.import_records([*records[:-2], forged, records[-1]])
    assert await store.read_all() == []


async def test_a_record_that_does_not_link_to_its_predecessor_is_refused(
    store: LedgerStore,
) -> None:
    records = await recorded_elsewhere("s1")
    with pytest.raises(IntegrityError, match="does not link"):
        await store.imports.import_records(
            [records[0], dataclasses.replace(records[1], prev_hash="e" * 64)]
        )
    with pytest.raises(IntegrityError, match="does not start a chain"):
        await store.imports.import_records([dataclasses.replace(records[0], prev_hash="f" * 64)])
    assert await store.read_all() == []


async def test_records_that_would_leave_a_gap_are_refused(store: LedgerStore) -> None:
    records = await recorded_elsewhere("s1", thoughts=5)
    with pytest.raises(InvalidInputError, match="import its earlier events first"):
        await store.imports.import_records(records[3:])
    assert await store.read_all() == []


async def test_a_session_stored_with_another_history_is_left_alone(store: LedgerStore) -> None:
    await store.append("s1", [started(), thought(1, "mine")], expected_version=0)
    ok = await recorded_elsewhere("ok")
    other = await recorded_elsewhere("s1")
    with pytest.raises(InvalidInputError, match="another event at version 1 than the imported"):
        await store.imports.import_records(ok + other)
    assert await store.read_stream("ok") == []
    assert len(await store.read_stream("s1")) == 2


async def test_an_event_id_recorded_elsewhere_is_refused(store: LedgerStore) -> None:
    records = await recorded_elsewhere("s1")
    used = records[1].event_id
    await store.append("mine", [thought(1)], expected_version=0, event_ids=[used])
    with pytest.raises(InvalidInputError, match="already recorded"):
        await store.imports.import_records(records)
    assert await store.read_stream("s1") == []


async def test_an_undecodable_payload_is_refused_even_when_its_hash_is_right(
    store: LedgerStore,
) -> None:
    records = await recorded_elsewhere("s1")
    odd = dataclasses.replace(records[1], event_type="thought.pondered")
    resealed = dataclasses.replace(
        odd,
        hash=compute_hash(
            prev_hash=odd.prev_hash,
            session_id=odd.session_id,
            version=odd.version,
            event_id=str(odd.event_id),
            recorded_at=format_time(odd.recorded_at),
            event_type=odd.event_type,
            schema_version=odd.schema_version,
            payload=odd.payload,
        ),
    )
    with pytest.raises(EventDecodingError, match="unknown event type"):
        await store.imports.import_records([records[0], resealed])
    assert await store.read_all() == []


async def test_malformed_batches_are_refused_before_anything_is_written(store: LedgerStore) -> None:
    records = await recorded_elsewhere("s1")
    with pytest.raises(InvalidInputError, match="appears twice"):
        await store.imports.import_records(
            [records[0], dataclasses.replace(records[1], event_id=records[0].event_id)]
        )
    with pytest.raises(InvalidInputError, match="consecutive"):
        await store.imports.import_records([records[0], records[2]])
    with pytest.raises(InvalidInputError, match="at most"):
        await store.imports.import_records(records[:1] * (MAX_BATCH + 1))
    with pytest.raises(InvalidInputError, match="invalid session id"):
        await store.imports.import_records([dataclasses.replace(records[0], session_id="../x")])
    assert await store.imports.import_records([]) == 0
    assert await store.read_all() == []


async def test_branches_and_odd_text_survive_an_import(store: LedgerStore) -> None:
    source = MemoryEventStore(clock=Tick())
    records = await source.append(
        "s1",
        [
            started(agent="ünï"),
            thought(1, "NUL \x00 and 思考 🧠"),
            BranchOpened(
                thought="b",
                thought_number=2,
                total_thoughts=2,
                next_thought_needed=False,
                branch_from_thought=1,
                branch_id="alt",
            ),
        ],
        expected_version=0,
        event_ids=[uuid.uuid4() for _ in range(3)],
    )
    await store.imports.import_records(records)
    assert [r.event for r in await store.read_stream("s1")] == [r.event for r in records]
    assert (await store.verify("s1")).ok


async def test_an_imported_session_survives_a_reopen(backend: Backend) -> None:
    if not backend.durable:
        pytest.skip("the memory backend keeps nothing across processes by design")
    records = await recorded_elsewhere("s1")
    store = await backend.open()
    await store.imports.import_records(records)
    await store.aclose()
    reopened = await backend.open()
    try:
        assert without_positions(await reopened.read_stream("s1")) == without_positions(records)
        assert await reopened.imports.import_records(records) == 0
        assert (await reopened.verify("s1")).ok
    finally:
        await reopened.aclose()


async def test_already_imported_counts_the_stored_events_of_a_session_from_version_1(
    store: LedgerStore,
) -> None:
    records = await recorded_elsewhere("s1", thoughts=5)
    hashes = [r.hash for r in records]
    assert await store.imports.already_imported("s1", hashes) == 0
    await store.imports.import_records(records[:3])
    assert await store.imports.already_imported("s1", hashes) == 3
    assert await store.imports.already_imported("s1", hashes[:2]) == 2
    await store.imports.import_records(records)
    assert await store.imports.already_imported("s1", hashes) == len(records)
    other = await recorded_elsewhere("s1", thoughts=5)  # other ids and times: other events
    with pytest.raises(InvalidInputError, match="'s1' already holds another event at version 1"):
        await store.imports.already_imported("s1", [r.hash for r in other])


EDITS = {
    "payload": "UPDATE tl_events SET payload = replace(payload, 'thought 2', 'thought X') "
    "WHERE session_id = 's1' AND version = 3",
    "hash-column": "UPDATE tl_events SET hash = :forged WHERE session_id = 's1' AND version = 3",
    "deleted": "DELETE FROM tl_events WHERE session_id = 's1' AND version = 3",
}


@pytest.mark.parametrize("edit", list(EDITS))
async def test_an_event_edited_in_place_is_a_conflict_not_already_imported(
    backend: Backend, edit: str
) -> None:
    if not backend.durable:
        pytest.skip("nothing can edit the memory backend's events in place")
    records = await recorded_elsewhere("s1", thoughts=4)
    store = await backend.open()
    try:
        await store.imports.import_records(records)
    finally:
        await store.aclose()
    forged = {"forged": bytes.fromhex("e" * 64)}  # as the log keeps a hash
    await backend.execute(EDITS[edit], **(forged if edit == "hash-column" else {}))
    store = await backend.open()
    try:
        before = await store.rows.read_all_rows()
        conflict = "'s1' already holds another event at version 3 than the imported one"
        with pytest.raises(InvalidInputError, match=conflict):
            await store.imports.already_imported("s1", [r.hash for r in records])
        with pytest.raises(InvalidInputError, match=conflict):
            await store.imports.import_records(records)
        # A slice that only extends the session still checks the stored event it follows.
        with pytest.raises(InvalidInputError, match=r"at version [34] than the imported one"):
            await store.imports.import_records(records[3:])
        assert await store.rows.read_all_rows() == before
    finally:
        await store.aclose()


async def test_times_that_go_backwards_within_a_session_are_refused(store: LedgerStore) -> None:
    start = datetime(2024, 5, 1, 12, tzinfo=UTC)
    # No store records a step back, so the chain is sealed by hand, as a foreign writer could.
    honest = await recorded_elsewhere("s1", thoughts=3)
    times = [start, start + timedelta(seconds=1), start + timedelta(seconds=5)]
    records = resealed(honest, [*times, start + timedelta(seconds=4)])
    with pytest.raises(InvalidInputError, match=r"version 4 .* recorded before the event before"):
        await store.imports.import_records(records)
    assert await store.read_all() == []
    # Against what is stored: version 4 follows a stored version 3 recorded after it.
    assert await store.imports.import_records(records[:3]) == 3
    with pytest.raises(InvalidInputError, match="recorded before the stored version 3"):
        await store.imports.import_records(records[3:])
    assert len(await store.read_all()) == 3


async def test_recorded_event_ids_names_those_the_store_holds(store: LedgerStore) -> None:
    mine = await store.append("s1", [started(), thought(1)], expected_version=0)
    imported = await recorded_elsewhere("s2")
    await store.imports.import_records(imported)
    unknown = [uuid.uuid4() for _ in range(2500)]  # more than one query's worth
    wanted = {mine[1].event_id, imported[-1].event_id, *unknown}
    assert await store.imports.recorded_event_ids(wanted) == {
        mine[1].event_id,
        imported[-1].event_id,
    }
    assert await store.imports.recorded_event_ids([]) == set()
