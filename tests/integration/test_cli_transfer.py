"""Export and import through ``main``: lossless, verified, idempotent, all or nothing."""

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import thoughtledger.api.transfer.importing
import thoughtledger.api.transfer.jsonl
from tests.support.cli import cli, demo, exported, sqlite_url, views, write_export
from tests.support.samples import record_sample
from thoughtledger import open_ledger
from thoughtledger.ledger.envelope import RecordedEvent


def test_export_then_import_gives_identical_sessions_and_verifying_chains(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    ledger_url: str,
) -> None:
    source = sqlite_url(tmp_path / "source.db")
    asyncio.run(record_sample(source))
    lines = exported(capsys, source, tmp_path / "all.jsonl")
    assert [line["session_id"] for line in lines].count("s-b") == 5
    ran = cli(capsys, "import", str(tmp_path / "all.jsonl"), "--db", ledger_url)
    assert ran.code == 0, ran.err
    assert ran.out == (
        f"imported {len(lines)} events of 5 sessions from {tmp_path / 'all.jsonl'} "
        "(0 already in the ledger); every chain verifies\n"
    )
    assert views(capsys, ledger_url) == views(capsys, source)
    assert cli(capsys, "verify", "--db", ledger_url).code == 0
    again = exported(capsys, ledger_url, tmp_path / "again.jsonl")
    assert [{**line, "position": 0} for line in again] == [
        {**line, "position": 0} for line in lines
    ]


def export_sample(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> tuple[list[dict[str, object]], str]:
    """Record the sample in ``a.db`` and export it to ``all.jsonl``; return its lines and the
    URL of a ledger still to be created, ``b.db``."""
    source = sqlite_url(tmp_path / "a.db")
    asyncio.run(record_sample(source))
    return exported(capsys, source, tmp_path / "all.jsonl"), sqlite_url(tmp_path / "b.db")


@pytest.mark.parametrize("bulk", [200, 0], ids=["head-by-head", "heads-in-pages"])
def test_importing_the_same_file_twice_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk: int
) -> None:
    monkeypatch.setattr(thoughtledger.api.transfer.importing, "BULK", bulk)
    _lines, target = export_sample(capsys, tmp_path)
    assert cli(capsys, "import", str(tmp_path / "all.jsonl"), "--db", target).code == 0
    before = exported(capsys, target, tmp_path / "before.jsonl")
    again = cli(capsys, "import", str(tmp_path / "all.jsonl"), "--db", target, "--json")
    assert again.code == 0
    assert again.json() == {
        "file": str(tmp_path / "all.jsonl"),
        "sessions": 5,
        "events": len(before),
        "imported": 0,
        "alreadyPresent": len(before),
    }
    assert exported(capsys, target, tmp_path / "after.jsonl") == before


def test_an_import_adds_what_a_session_gained_since_an_earlier_import(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source, target = sqlite_url(tmp_path / "a.db"), sqlite_url(tmp_path / "b.db")
    session_id = demo(capsys, source)
    full = exported(capsys, source, tmp_path / "full.jsonl", session_id)
    write_export(tmp_path / "part.jsonl", full[:4])
    assert cli(capsys, "import", str(tmp_path / "part.jsonl"), "--db", target).code == 0
    ran = cli(capsys, "import", str(tmp_path / "full.jsonl"), "--db", target, "--json")
    assert (ran.json()["imported"], ran.json()["alreadyPresent"]) == (6, 4)
    assert cli(capsys, "verify", session_id, "--db", target).code == 0


def test_a_tampered_export_is_refused_and_nothing_is_imported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines, target = export_sample(capsys, tmp_path)
    forged = next(i for i, line in enumerate(lines) if line["session_id"] == "s-d")
    lines[forged + 2]["payload"] = str(lines[forged + 2]["payload"]).replace("thought", "idea")
    write_export(tmp_path / "forged.jsonl", lines)
    ran = cli(capsys, "import", str(tmp_path / "forged.jsonl"), "--db", target)
    assert ran.code == 1
    assert ran.out == ""
    assert ran.err == (
        f"thoughtledger: error: {tmp_path / 'forged.jsonl'}:{forged + 3}: session s-d version 3 "
        f"(event {lines[forged + 2]['event_id']}) does not verify: content does not match its "
        "digest; nothing was imported\n"
    )
    assert not (tmp_path / "b.db").exists()


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda lines: lines[:2] + lines[3:], "version 3 is missing (the next stored is 4)"),
        (lambda lines: [lines[1], lines[0], *lines[2:]], "version 1 is missing"),
    ],
    ids=["a-line-removed", "lines-swapped"],
)
def test_an_export_with_events_removed_or_reordered_is_refused(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    edit: Callable[[list[str]], list[str]],
    reason: str,
) -> None:
    source, target = sqlite_url(tmp_path / "a.db"), sqlite_url(tmp_path / "b.db")
    session_id = demo(capsys, source)
    exported(capsys, source, tmp_path / "one.jsonl", session_id)
    lines = (tmp_path / "one.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "edited.jsonl").write_text("".join(edit(lines)))
    ran = cli(capsys, "import", str(tmp_path / "edited.jsonl"), "--db", target)
    assert ran.code == 1
    assert reason in ran.err
    assert ran.err.count("\n") == 1


@pytest.mark.parametrize("bulk", [200, 0], ids=["head-by-head", "heads-in-pages"])
def test_an_import_that_conflicts_with_the_ledger_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk: int
) -> None:
    monkeypatch.setattr(thoughtledger.api.transfer.importing, "BULK", bulk)
    _lines, target = export_sample(capsys, tmp_path)
    asyncio.run(record_sample(target))  # same ids, recorded at other times: other hashes
    before = exported(capsys, target, tmp_path / "before.jsonl")
    ran = cli(capsys, "import", str(tmp_path / "all.jsonl"), "--db", target)
    assert ran.code == 1
    assert ran.err == (
        f"thoughtledger: error: {tmp_path / 'all.jsonl'}: session 's-a' already holds another "
        "event at version 1 than the imported one (its contents or hash differ); nothing was "
        "imported\n"
    )
    assert exported(capsys, target, tmp_path / "after.jsonl") == before


def test_exporting_named_sessions_writes_only_them_in_version_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "a.db")
    asyncio.run(record_sample(url))
    lines = exported(capsys, url, tmp_path / "two.jsonl", "s-e", "s-a", "s-e")
    assert [(line["session_id"], line["version"]) for line in lines] == [
        ("s-e", 1), ("s-e", 2), ("s-e", 3), ("s-e", 4),
        ("s-a", 1), ("s-a", 2), ("s-a", 3), ("s-a", 4), ("s-a", 5),
    ]  # fmt: skip
    assert set(lines[0]) == {
        "session_id", "version", "event_id", "recorded_at", "event_type", "schema_version",
        "payload", "prev_hash", "hash", "position",
    }  # fmt: skip
    assert lines[0]["recorded_at"] == "2024-05-02T00:00:32.750000Z"


def test_a_failed_export_leaves_the_previous_file_untouched_and_no_temporary_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = sqlite_url(tmp_path / "a.db")
    asyncio.run(record_sample(url))
    target = tmp_path / "out" / "ledger.jsonl"
    target.parent.mkdir()
    target.write_text("previous\n")
    real = thoughtledger.api.transfer.jsonl.to_line
    calls = 0

    def full_disk(record: RecordedEvent) -> str:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise OSError(28, "No space left on device")
        return real(record)

    monkeypatch.setattr("thoughtledger.adapters.cli.export.to_line", full_disk)
    ran = cli(capsys, "export", "--all", "-o", str(target), "--db", url, "--force")
    assert ran.code == 1
    assert ran.err == f"thoughtledger: error: cannot write {target}: No space left on device\n"
    assert target.read_text() == "previous\n"
    assert [p.name for p in target.parent.iterdir()] == ["ledger.jsonl"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")
def test_an_unwritable_output_fails_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "a.db")
    demo(capsys, url)
    ran = cli(capsys, "export", "--all", "-o", "/proc/thoughtledger.jsonl", "--db", url)
    assert ran.code == 1
    assert ran.err.startswith("thoughtledger: error: cannot write /proc/thoughtledger.jsonl: ")
    assert ran.err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "--all", "-o", "{tmp}"], "{tmp} is a directory; name a file"),
        (["export", "--all", "-o", "{tmp}/nope/x.jsonl"], "{tmp}/nope is not a directory"),
        (["export", "-o", "{tmp}/x.jsonl"], "name the sessions to export, or give --all"),
        (["export", "s-a", "--all", "-o", "{tmp}/x.jsonl"], "name the sessions to export"),
        (["export", "s-z", "-o", "{tmp}/x.jsonl"], "no session 's-z' in this ledger; did you"),
        (["export", "--all", "-o", "{tmp}/a.db"], "is the ledger's own database"),
        (["export", "--all"], "name the file to write with -o FILE"),
        (["import", "{tmp}"], "{tmp} is a directory; name an export file"),
        (["import", "{tmp}/missing.jsonl"], "no such file: {tmp}/missing.jsonl"),
    ],
)
def test_bad_paths_and_choices_are_usage_errors_and_write_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    url = sqlite_url(tmp_path / "a.db")
    asyncio.run(record_sample(url))
    before = sorted(p.name for p in tmp_path.iterdir())
    ran = cli(capsys, *(part.format(tmp=tmp_path) for part in argv), "--db", url)
    assert ran.code == 2
    assert message.format(tmp=tmp_path) in ran.err
    assert ran.err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"hello\n", ":1: not a thoughtledger export line (Invalid JSON"),
        (b'{"session_id": "s"}\n', ":1: not a thoughtledger export line (version: Field required"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", ":1: not a thoughtledger export line"),
    ],
    ids=["text", "json-of-another-shape", "binary"],
)
def test_a_file_that_is_not_an_export_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / "odd.jsonl").write_bytes(content)
    target = sqlite_url(tmp_path / "b.db")
    ran = cli(capsys, "import", str(tmp_path / "odd.jsonl"), "--db", target)
    assert ran.code == 1
    assert ran.err.startswith(f"thoughtledger: error: {tmp_path / 'odd.jsonl'}{message}")
    assert ran.err.count("\n") == 1
    assert "Traceback" not in ran.err
    assert not (tmp_path / "b.db").exists()


def test_an_export_is_created_readable_by_its_owner_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "a.db")
    demo(capsys, url)
    exported(capsys, url, tmp_path / "x.jsonl")
    assert (tmp_path / "x.jsonl").stat().st_mode & 0o777 == 0o600


def test_export_refuses_to_overwrite_an_existing_file_unless_forced(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "a.db")
    asyncio.run(record_sample(url))
    target = tmp_path / "existing.jsonl"
    target.write_bytes(b"an older export\n")
    ran = cli(capsys, "export", "--all", "-o", str(target), "--db", url)
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == f"thoughtledger: error: {target} exists; --force to overwrite\n"
    assert target.read_bytes() == b"an older export\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".existing")] == []
    forced = cli(capsys, "export", "--all", "-o", str(target), "--db", url, "--force")
    assert forced.code == 0, forced.err
    assert json.loads(target.read_text().splitlines()[-1])["manifest"]["format"] == 1


def test_export_to_standard_output_writes_no_file_and_imports_back(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    ledger_url: str,
) -> None:
    source = sqlite_url(tmp_path / "source.db")
    asyncio.run(record_sample(source))
    monkeypatch.chdir(tmp_path)
    ran = cli(capsys, "export", "--all", "-o", "-", "--db", source)
    assert ran.code == 0, ran.err
    assert not (tmp_path / "-").exists()
    assert ran.err == "exported 21 events of 5 sessions to standard output\n"
    lines = ran.out.splitlines()
    assert [json.loads(line)["session_id"] for line in lines[:-1]].count("s-b") == 5
    assert json.loads(lines[-1])["manifest"]["sessions"][0]["session_id"] == "s-a"
    (tmp_path / "piped.jsonl").write_text(ran.out)
    back = cli(capsys, "import", str(tmp_path / "piped.jsonl"), "--db", ledger_url, "--json")
    assert back.code == 0, back.err
    assert (back.json()["imported"], back.json()["sessions"]) == (21, 5)
    assert views(capsys, ledger_url) == views(capsys, source)
    summary = cli(capsys, "export", "s-c", "-o", "-", "--db", source, "--json")
    assert json.loads(summary.err) == {"file": "standard output", "sessions": 1, "events": 3}
    assert len(summary.out.splitlines()) == 4


def test_an_export_ends_with_a_manifest_of_each_sessions_last_version_hash_and_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "a.db")
    asyncio.run(record_sample(url))
    lines = exported(capsys, url, tmp_path / "two.jsonl", "s-e", "s-a")
    manifest = json.loads((tmp_path / "two.jsonl").read_text().splitlines()[-1])
    assert manifest == {
        "manifest": {
            "format": 1,
            "sessions": [
                {"session_id": "s-e", "version": 4, "hash": lines[3]["hash"], "events": 4},
                {"session_id": "s-a", "version": 5, "hash": lines[8]["hash"], "events": 5},
            ],
        }
    }


def test_a_ledger_without_sessions_exports_the_manifest_alone_which_imports_as_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "empty.db")

    async def create() -> None:
        async with open_ledger(url):
            pass

    asyncio.run(create())
    ran = cli(capsys, "export", "--all", "-o", str(tmp_path / "none.jsonl"), "--db", url)
    assert ran.code == 0, ran.err
    assert (tmp_path / "none.jsonl").read_text() == '{"manifest":{"format":1,"sessions":[]}}\n'
    back = cli(capsys, "import", str(tmp_path / "none.jsonl"), "--db", url)
    assert (back.code, back.out) == (
        0,
        f"nothing to import: the ledger already holds all 0 events of 0 sessions in "
        f"{tmp_path / 'none.jsonl'}\n",
    )


def test_a_file_that_appears_while_exporting_is_not_overwritten(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = sqlite_url(tmp_path / "a.db")
    asyncio.run(record_sample(url))
    target = tmp_path / "late.jsonl"
    real = thoughtledger.api.transfer.jsonl.to_line

    def another_writer_meanwhile(record: RecordedEvent) -> str:
        if not target.exists():
            target.write_text("written by someone else\n")
        return real(record)

    monkeypatch.setattr("thoughtledger.adapters.cli.export.to_line", another_writer_meanwhile)
    ran = cli(capsys, "export", "--all", "-o", str(target), "--db", url)
    assert ran.code == 1
    assert ran.err == f"thoughtledger: error: {target} exists; --force to overwrite\n"
    assert target.read_text() == "written by someone else\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".late")] == []
