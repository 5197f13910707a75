"""``doctor`` says what is behind: the schema a ledger holds against this release's (read as it
is; the next writable opening upgrades it), and how far the loop marks are behind the log (what
reads fold meanwhile)."""

import json
from pathlib import Path

import pytest

from tests.support.factories import started, thought
from tests.support.older_ledger import SCHEMA_8, schema_8_ledger
from tests.support.processes import thoughtledger
from thoughtledger import open_ledger
from thoughtledger.api import schema_version
from thoughtledger.ledger.store.sqlite import SqliteEventStore

pytestmark = pytest.mark.anyio


def _doctor(db: Path | str) -> dict[str, object]:
    url = db if isinstance(db, str) else f"sqlite:///{db}"
    ran = thoughtledger("doctor", "--db", url, "--json")
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


async def test_doctor_shows_the_schema_an_older_ledger_holds_and_that_writing_upgrades_it(
    ledger_url: str,
) -> None:
    await schema_8_ledger(ledger_url, 3)
    release = schema_version()
    assert release > SCHEMA_8

    shown = thoughtledger("doctor", "--db", ledger_url)
    assert (shown.returncode, shown.stderr) == (0, "")
    assert (
        f"schema    {SCHEMA_8}, behind this release's {release}: read as it is; the next "
        "writable opening (serve, record) upgrades it\n"
    ) in shown.stdout
    found = _doctor(ledger_url)
    assert (found["schema"], found["releaseSchema"]) == (SCHEMA_8, release)
    assert f"behind this release's {release}" in str(found["schemaNote"])
    assert found["events"] == 4  # read as it is: the older ledger opened, untouched

    async with open_ledger(ledger_url) as writing:  # upgrades it, as doctor said
        assert writing.stored_schema_version == release
    async with open_ledger(ledger_url, read_only=True) as reading:
        assert reading.stored_schema_version == release
