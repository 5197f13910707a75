"""What ``import`` refuses through ``main``: cut-short files, conflicts, oversized events and
times that go backwards; and when it says that running it again finishes the work.

Every refusal writes nothing: the target ledger is not even created when the file alone is at
fault, and keeps every row as it was when the file conflicts with it.
"""

import asyncio
import json
import sqlite3
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import thoughtledger.api.transfer.check
import thoughtledger.api.transfer.importing
from tests.support.cli import cli, demo, exported, sqlite_url, views, write_export
from tests.support.factories import started, thought
from tests.support.forged import resealed_lines
from tests.support.raw_store import raw_store
from tests.support.samples import record_sample
from thoughtledger import open_ledger
from thoughtledger.api.transfer.jsonl import MAX_LINE_BYTES
from thoughtledger.ledger.decide import DEFAULT_MAX_THOUGHT_BYTES
from thoughtledger.ledger.events import BranchOpened


def rows(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT * FROM tl_events ORDER BY position").fetchall()


def everything(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return rows(path) + db.execute("SELECT * FROM tl_sessions").fetchall()


def edit(path: Path, statement: str) -> None:
    """Change a ledger behind its back, as someone with the file could."""
    with sqlite3.connect(path) as db:
        db.execute(statement)


# -- a cut-short file ---------------------------------------------------------------------------


def cut_mid_session(text: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:7])  # s-a whole, then two of s-b's five events


def cut_before_the_manifest(text: str) -> str:
    return "".join(text.splitlines(keepends=True)[:-1])


def cut_mid_line(text: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:7]) + lines[7][:40]


def cut_mid_manifest(text: str) -> str:
    return text[: len(text) - 30]


@pytest.mark.parametrize(
    ("cut", "message"),
    [
        (cut_mid_session, "{file} does not end with the manifest every export ends with: it was "
         "cut short (or written by a thoughtledger before exports had one, which "
         "--without-manifest imports unchecked); nothing was imported"),
        (cut_before_the_manifest, "{file} does not end with the manifest every export ends "
         "with: it was cut short (or written by a thoughtledger before exports had one, which "
         "--without-manifest imports unchecked); nothing was imported"),
        (cut_mid_line, "{file}:8: the file ends in the middle of a line: the export was cut "
         "short; nothing was imported"),
        (cut_mid_manifest, "{file}:22: the file ends in the middle of a line: the export was "
         "cut short; nothing was imported"),
    ],
)  # fmt: skip
def test_an_export_cut_short_is_refused_and_nothing_is_imported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cut: object, message: str
) -> None:
    source = sqlite_url(tmp_path / "a.db")
    asyncio.run(record_sample(source))
    exported(capsys, source, tmp_path / "all.jsonl")
    assert callable(cut)
    (tmp_path / "cut.jsonl").write_text(cut((tmp_path / "all.jsonl").read_text()))
    ran = cli(capsys, "import", str(tmp_path / "cut.jsonl"), "--db", sqlite_url(tmp_path / "b.db"))
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == f"thoughtledger: error: {message.format(file=tmp_path / 'cut.jsonl')}\n"
    assert not (tmp_path / "b.db").exists()


def test_a_session_whose_events_stop_before_the_manifests_head_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = sqlite_url(tmp_path / "a.db")
    asyncio.run(record_sample(source))
    exported(capsys, source, tmp_path / "all.jsonl")
    lines = (tmp_path / "all.jsonl").read_text().splitlines(keepends=True)
    # s-b's last two events go, its chain still verifies, and the manifest still names version 5.
    (tmp_path / "short.jsonl").write_text("".join(lines[:8] + lines[10:]))
    ran = cli(
        capsys, "import", str(tmp_path / "short.jsonl"), "--db", sqlite_url(tmp_path / "b.db")
    )
    assert ran.code == 1
    assert ran.err == (
        f"thoughtledger: error: {tmp_path / 'short.jsonl'}: session s-b stops at version 3, but "
        "the manifest says it ends at version 5 with 5 events: the export is incomplete (cut "
        "short, or lines were removed); nothing was imported\n"
    )
    assert not (tmp_path / "b.db").exists()


def test_a_manifest_that_does_not_match_the_file_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = sqlite_url(tmp_path / "a.db")
    session_id = demo(capsys, source)
    lines = exported(capsys, source, tmp_path / "one.jsonl", session_id)
    text = (tmp_path / "one.jsonl").read_text()
    manifest = json.loads(text.splitlines()[-1])
    entry = manifest["manifest"]["sessions"][0]
    variants = {
        "other-hash": {**entry, "hash": "f" * 64},
        "unlisted": {**entry, "session_id": "another"},
    }
    for name, changed in variants.items():
        body = "".join(json.dumps(line) + "\n" for line in lines)
        forged = {"manifest": {"format": 1, "sessions": [changed]}}
        (tmp_path / f"{name}.jsonl").write_text(body + json.dumps(forged) + "\n")
    other = cli(capsys, "import", str(tmp_path / "other-hash.jsonl"), "--db", source)
    assert other.code == 1
    assert f"session {session_id} does not end with the event the manifest names" in other.err
    unlisted = cli(capsys, "import", str(tmp_path / "unlisted.jsonl"), "--db", source)
    assert unlisted.code == 1
    assert "session another has no events in the file" in unlisted.err
    (tmp_path / "newer.jsonl").write_text(
        text.replace('{"manifest":{"format":1', '{"manifest":{"format":2')
    )
    newer = cli(capsys, "import", str(tmp_path / "newer.jsonl"), "--db", source)
    assert newer.code == 1
    assert "the manifest is of format 2, newer than this thoughtledger reads (1)" in newer.err
    (tmp_path / "after.jsonl").write_text(text + text.splitlines(keepends=True)[0])
    after = cli(capsys, "import", str(tmp_path / "after.jsonl"), "--db", source)
    assert after.code == 1
    assert ":12: a line follows the manifest on line 11, which ends an export" in after.err


def test_an_export_from_before_manifests_imports_only_when_asked_and_with_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source, target = sqlite_url(tmp_path / "a.db"), sqlite_url(tmp_path / "b.db")
    asyncio.run(record_sample(source))
    exported(capsys, source, tmp_path / "all.jsonl")
    old = tmp_path / "old.jsonl"
    old.write_text("".join((tmp_path / "all.jsonl").read_text().splitlines(keepends=True)[:-1]))
    assert cli(capsys, "import", str(old), "--db", target).code == 1
    ran = cli(capsys, "import", str(old), "--db", target, "--without-manifest")
    assert ran.code == 0, ran.err
    assert ran.err == (
        f"thoughtledger: warning: {old} has no manifest: whether it was cut short cannot be "
        "checked\n"
    )
    assert ran.out.startswith("imported 21 events of 5 sessions")
    assert views(capsys, target) == views(capsys, source)


# -- conflicts with what the ledger holds -------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE tl_events SET payload = json_set(payload, '$.thought', 'edited') WHERE version = 3",
        "UPDATE tl_events SET payload = replace(payload, 'thought_number', 'number') "
        "WHERE version = 3",
        "UPDATE tl_events SET recorded_at = replace(recorded_at, 'T', 'T0') WHERE version = 3",
        "UPDATE tl_events SET hash = prev_hash WHERE version = 3",
        "DELETE FROM tl_events WHERE version = 3",
    ],
    ids=["payload", "payload-no-longer-decodes", "recorded-at", "hash-column", "deleted"],
)
def test_an_event_edited_in_the_ledger_is_a_conflict_not_already_imported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: str
) -> None:
    path = tmp_path / "a.db"
    session_id = demo(capsys, sqlite_url(path))
    exported(capsys, sqlite_url(path), tmp_path / "one.jsonl", session_id)
    edit(path, change)
    before = everything(path)
    ran = cli(capsys, "import", str(tmp_path / "one.jsonl"), "--db", sqlite_url(path))
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == (
        f"thoughtledger: error: {tmp_path / 'one.jsonl'}: session {session_id!r} already holds "
        "another event at version 3 than the imported one (its contents or hash differ); "
        "nothing was imported\n"
    )
    assert everything(path) == before


def test_an_event_id_the_ledger_holds_for_another_event_refuses_the_whole_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source, target = sqlite_url(tmp_path / "a.db"), tmp_path / "b.db"
    asyncio.run(record_sample(source))
    lines = exported(capsys, source, tmp_path / "all.jsonl")
    taken = uuid.UUID(str(lines[-1]["event_id"]))  # s-e's last event, written last

    async def record_with_that_id() -> None:
        async with open_ledger(sqlite_url(target)) as ledger:
            await raw_store(ledger).append(
                "mine", [started()], expected_version=0, event_ids=[taken]
            )

    asyncio.run(record_with_that_id())
    before = rows(target)
    ran = cli(capsys, "import", str(tmp_path / "all.jsonl"), "--db", sqlite_url(target))
    assert ran.code == 1
    assert ran.err == (
        f"thoughtledger: error: {tmp_path / 'all.jsonl'}: session s-e version 4 has event id "
        f"{taken}, which this ledger holds for another event; nothing was imported\n"
    )
    assert "run it again" not in ran.err
    assert rows(target) == before


def test_an_event_id_twice_in_the_file_is_refused_before_anything_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    async def record(url: str, ids: list[uuid.UUID]) -> None:
        async with open_ledger(url) as ledger:
            for session_id, event_id in zip(("s-1", "s-2"), ids, strict=True):
                await raw_store(ledger).append(
                    session_id, [started()], expected_version=0, event_ids=[event_id]
                )

    same = uuid.uuid4()
    asyncio.run(record(sqlite_url(tmp_path / "a.db"), [uuid.uuid4(), same]))
    asyncio.run(record(sqlite_url(tmp_path / "c.db"), [same, uuid.uuid4()]))
    first = exported(capsys, sqlite_url(tmp_path / "a.db"), tmp_path / "a.jsonl", "s-2")
    second = exported(capsys, sqlite_url(tmp_path / "c.db"), tmp_path / "c.jsonl", "s-1")
    write_export(tmp_path / "both.jsonl", first + second)
    ran = cli(capsys, "import", str(tmp_path / "both.jsonl"), "--db", sqlite_url(tmp_path / "b.db"))
    assert ran.code == 1
    assert f"both.jsonl:2: event id {same} appears twice in the file" in ran.err
    assert not (tmp_path / "b.db").exists()


# -- what the API would not have recorded -------------------------------------------------------


def export_with_thought(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> Path:
    """Export a session whose third event holds ``text``, recorded past the API (the store
    takes 16 MiB; only the API stops a thought at 1 MiB)."""

    async def record_directly() -> None:
        async with open_ledger(sqlite_url(tmp_path / "a.db")) as ledger:
            await raw_store(ledger).append("big", [started(), thought(1)], expected_version=0)
            await raw_store(ledger).append("big", [thought(2, text)], expected_version=2)

    asyncio.run(record_directly())
    exported(capsys, sqlite_url(tmp_path / "a.db"), tmp_path / "big.jsonl")
    return tmp_path / "big.jsonl"


def test_a_thought_at_the_apis_limit_imports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = export_with_thought(capsys, tmp_path, "é" * (DEFAULT_MAX_THOUGHT_BYTES // 2))
    ran = cli(capsys, "import", str(path), "--db", sqlite_url(tmp_path / "b.db"))
    assert ran.code == 0, ran.err


@pytest.mark.parametrize(
    "text",
    ["é" * (DEFAULT_MAX_THOUGHT_BYTES // 2) + "x", "x" * (DEFAULT_MAX_THOUGHT_BYTES + 1)],
    ids=["one-byte-over-in-two-byte-characters", "one-byte-over"],
)
def test_a_thought_over_the_apis_limit_is_refused_on_import(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str
) -> None:
    path = export_with_thought(capsys, tmp_path, text)
    ran = cli(capsys, "import", str(path), "--db", sqlite_url(tmp_path / "b.db"))
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == (
        f"thoughtledger: error: {path}:3: session big version 3: its thought is "
        f"{len(text.encode())} bytes, over the limit of {DEFAULT_MAX_THOUGHT_BYTES} bytes a "
        "ledger records; nothing was imported\n"
    )
    assert not (tmp_path / "b.db").exists()


def test_a_branch_id_over_the_apis_limit_is_refused_on_import(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    async def record_directly() -> None:
        async with open_ledger(sqlite_url(tmp_path / "a.db")) as ledger:
            branch = BranchOpened(
                thought="b",
                thought_number=2,
                total_thoughts=2,
                next_thought_needed=False,
                branch_from_thought=1,
                branch_id="x" * 257,
            )
            await raw_store(ledger).append("s", [started(), thought(1), branch], expected_version=0)

    asyncio.run(record_directly())
    exported(capsys, sqlite_url(tmp_path / "a.db"), tmp_path / "b.jsonl")
    ran = cli(capsys, "import", str(tmp_path / "b.jsonl"), "--db", sqlite_url(tmp_path / "b.db"))
    assert ran.code == 1
    assert ":3: session s version 3: its branch id is 257 characters, over the limit" in ran.err


def test_a_line_longer_than_any_export_holds_is_refused_without_reading_it_whole(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as out:
        out.write(b'{"session_id": "s", "payload": "')
        out.write(b"x" * (MAX_LINE_BYTES + 1))
    ran = cli(capsys, "import", str(huge), "--db", sqlite_url(tmp_path / "b.db"))
    assert ran.code == 1
    assert ran.err == (
        f"thoughtledger: error: {huge}:1: line is over {MAX_LINE_BYTES} bytes, longer than any "
        "export line holds; nothing was imported\n"
    )


def test_time_going_backwards_within_a_session_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    start = datetime(2024, 5, 1, 12, tzinfo=UTC)
    readings = iter([start, start + timedelta(seconds=5), start + timedelta(seconds=6)])

    async def record() -> None:
        async with open_ledger(
            sqlite_url(tmp_path / "a.db"), ttl=None, clock=lambda: next(readings)
        ) as ledger:
            await raw_store(ledger).append("s", [started(), thought(1)], expected_version=0)
            await raw_store(ledger).append("s", [thought(2)], expected_version=2)
            await raw_store(ledger).append("s", [thought(3)], expected_version=3)

    asyncio.run(record())
    lines = exported(capsys, sqlite_url(tmp_path / "a.db"), tmp_path / "s.jsonl")
    # A store never records a step back in time: the file is edited by hand, its chain sealed
    # anew so that only the time is wrong, as a hostile or foreign file could be.
    lines[3]["recorded_at"] = "2024-05-01T12:00:04.000000Z"
    write_export(tmp_path / "s.jsonl", resealed_lines(lines))
    ran = cli(capsys, "import", str(tmp_path / "s.jsonl"), "--db", sqlite_url(tmp_path / "b.db"))
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == (
        f"thoughtledger: error: {tmp_path / 's.jsonl'}:4: session s version 4 was recorded at "
        "2024-05-01T12:00:04.000000Z, before version 3 (2024-05-01T12:00:05.000000Z): a "
        "session's times never go backwards; nothing was imported\n"
    )
    assert not (tmp_path / "b.db").exists()


# -- when running it again finishes -------------------------------------------------------------


def test_only_a_database_failure_midway_says_to_run_it_again_and_a_rerun_finishes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        thoughtledger.api.transfer.importing, "BATCH", 1
    )  # one session per transaction
    source, target = sqlite_url(tmp_path / "a.db"), tmp_path / "b.db"
    asyncio.run(record_sample(source))
    exported(capsys, source, tmp_path / "all.jsonl")

    async def create() -> None:
        async with open_ledger(sqlite_url(target)):
            pass

    asyncio.run(create())
    # The database itself fails on s-d's first event (a trigger that errors, as a full disk would).
    edit(
        target,
        "CREATE TRIGGER fail BEFORE INSERT ON tl_events WHEN NEW.session_id = 's-d' "
        "BEGIN SELECT json('the disk is full'); END",
    )
    ran = cli(capsys, "import", str(tmp_path / "all.jsonl"), "--db", sqlite_url(target))
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == (
        f"thoughtledger: error: import of {tmp_path / 'all.jsonl'} stopped after 13 events: "
        f"import into {target} failed: malformed JSON; run it again to finish (what was "
        "imported is skipped)\n"
    )
    written = Counter(str(row[1]) for row in rows(target))
    assert written == {"s-a": 5, "s-b": 5, "s-c": 3}  # whole sessions, none of s-d
    edit(target, "DROP TRIGGER fail")
    again = cli(capsys, "import", str(tmp_path / "all.jsonl"), "--db", sqlite_url(target))
    assert again.code == 0, again.err
    assert again.out == (
        f"imported 8 events of 5 sessions from {tmp_path / 'all.jsonl'} (13 already in the "
        "ledger); every chain verifies\n"
    )
    assert views(capsys, sqlite_url(target)) == views(capsys, source)


def test_a_file_too_large_to_keep_in_memory_is_read_again_and_imports_the_same(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(thoughtledger.api.transfer.check, "KEEP", 0)
    monkeypatch.setattr(
        thoughtledger.api.transfer.importing, "BATCH", 6
    )  # sessions gathered, never split
    source, target = sqlite_url(tmp_path / "a.db"), sqlite_url(tmp_path / "b.db")
    asyncio.run(record_sample(source))
    exported(capsys, source, tmp_path / "all.jsonl")
    ran = cli(capsys, "import", str(tmp_path / "all.jsonl"), "--db", target)
    assert ran.code == 0, ran.err
    assert views(capsys, target) == views(capsys, source)
