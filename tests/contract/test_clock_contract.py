"""Recorded times: within a session they never go backwards, whatever the clocks say.

A clock set back (NTP, a resumed VM) or writers with skewed clocks sharing one database would
otherwise record a step back in time, and the ledger's own export would be refused by its import.
"""

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.backends import Backend
from tests.support.factories import started, thought
from thoughtledger.adapters.cli import main
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio

T = datetime(2024, 5, 1, 12, tzinfo=UTC)


class SetClock:
    """A clock that reads whatever the test last set: stepping it back is one assignment."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def seconds(records: list[RecordedEvent]) -> list[float]:
    return [(r.recorded_at - T).total_seconds() for r in records]


async def test_a_clock_set_back_records_the_sessions_last_time_and_the_export_imports(
    backend: Backend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = SetClock(T + timedelta(seconds=5))
    store = await backend.open(clock=clock)
    try:
        await store.append("s", [started(), thought(1)], expected_version=0)
        clock.now = T + timedelta(seconds=4)  # set back by a second
        behind = await store.append("s", [thought(2), thought(3)], expected_version=2)
        assert seconds(behind) == [5, 5]
        clock.now = T + timedelta(seconds=6)  # ahead again: its own reading is recorded
        assert seconds(await store.append("s", [thought(4)], expected_version=4)) == [6]
        stored = await store.read_stream("s")
        assert seconds(stored) == [5, 5, 5, 5, 6]
        head = await store.stream_head("s")
        assert head is not None
        assert head.updated_at == T + timedelta(seconds=6)
        report = await store.verify("s")
        assert (report.ok, report.checked) == (True, 5)
        # What a store recorded, another store imports (the import refuses times going back).
        assert await MemoryEventStore().imports.import_records(await store.read_all()) == 5
    finally:
        await store.aclose()
    if backend.url is None:
        return  # a memory ledger lives in this process only: the CLI cannot open it
    exported, target = tmp_path / "s.jsonl", f"sqlite:///{tmp_path / 'copy.db'}"
    exporting = ["export", "s", "-o", str(exported), "--db", backend.url]
    assert await asyncio.to_thread(main, exporting) == 0
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["import", str(exported), "--db", target]) == 0
    assert capsys.readouterr().out == (
        f"imported 5 events of 1 session from {exported} (0 already in the ledger); "
        "every chain verifies\n"
    )


async def test_writers_with_skewed_clocks_on_one_database_never_record_a_step_back(
    backend: Backend,
) -> None:
    if not backend.durable:
        pytest.skip("a memory store is one process's own: two stores cannot share it")
    ahead, behind = SetClock(T), SetClock(T)
    first, second = await backend.open(clock=ahead), await backend.open(clock=behind)
    try:
        recorded: list[RecordedEvent] = []
        for turn in range(8):
            # The ahead writer's clock runs 10 s before the other's, and both keep moving on.
            ahead.now = T + timedelta(seconds=10 + turn)
            behind.now = T + timedelta(seconds=turn)
            writer = first if turn % 2 == 0 else second
            events = [started()] if turn == 0 else [thought(turn), thought(turn + 1)]
            recorded += await writer.append("s", events, expected_version=len(recorded))
        times = [r.recorded_at for r in recorded]
        assert times == sorted(times)
        # The writer behind recorded the time of the event before its own, never its clock's.
        assert seconds(recorded) == [10, 10, 10, 12, 12, 12, 12, 14, 14, 14, 14, 16, 16, 16, 16]
        for store in (first, second):
            assert [r.hash for r in await store.read_stream("s")] == [r.hash for r in recorded]
            assert (await store.verify("s")).ok
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_session_takes_no_time_from_other_sessions(backend: Backend) -> None:
    clock = SetClock(T + timedelta(seconds=5))
    store = await backend.open(clock=clock)
    try:
        await store.append("a", [started()], expected_version=0)
        clock.now = T + timedelta(seconds=4)
        # A new session records the clock, not the later time of another session.
        assert seconds(await store.append("b", [started()], expected_version=0)) == [4]
        clock.now = T + timedelta(seconds=3)
        # Appends committed together (one SQLite group commit): each session keeps its own time.
        together = await asyncio.gather(
            store.append("a", [thought(1)], expected_version=1),
            store.append("b", [thought(1)], expected_version=1),
            store.append("c", [started()], expected_version=0),
        )
        assert [seconds(records) for records in together] == [[5], [4], [3]]
    finally:
        await store.aclose()
