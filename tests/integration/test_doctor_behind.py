"""``doctor`` says how far the loop marks are behind the log (what reads fold meanwhile)."""

import json
from pathlib import Path

import pytest

from tests.support.factories import started, thought
from tests.support.processes import thoughtledger
from thoughtledger.ledger.store.sqlite import SqliteEventStore

pytestmark = pytest.mark.anyio


def _doctor(db: Path) -> dict[str, object]:
    ran = thoughtledger("doctor", "--db", f"sqlite:///{db}", "--json")
    assert ran.returncode == 0, ran.stderr
    ledger: dict[str, object] = json.loads(ran.stdout)["ledger"]
    return ledger


async def test_doctor_counts_the_events_the_loop_marks_have_not_taken_in(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    # Written by plain appends to the store, as another program would: nothing took them in.
    store = await SqliteEventStore.open(db)
    try:
        await store.append(
            "s", [started(agent="x"), *(thought(n) for n in range(1, 6))], expected_version=0
        )
    finally:
        await store.aclose()
    assert _doctor(db)["loopMarksBehind"] == 6
    _record_one(db, tmp_path / "calls.jsonl")
    assert _doctor(db)["loopMarksBehind"] == 0  # a writer takes everything in


def _record_one(db: Path, calls: Path) -> None:
    line = {"thought": "t", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False}
    calls.write_text(json.dumps(line) + "\n")
    ran = thoughtledger("record", str(calls), "--db", f"sqlite:///{db}")
    assert ran.returncode == 0, ran.stderr
