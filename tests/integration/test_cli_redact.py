"""``thoughtledger redact`` end to end: a real process on a real SQLite file, then imports."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import cli, exported, sqlite_url, write_export
from tests.support.legacy import legacy_session
from tests.support.raw_store import raw_store
from thoughtledger import Ledger
from thoughtledger.ledger.content import REDACTED, strip
from thoughtledger.ledger.store.sqlite import SqliteEventStore

pytestmark = pytest.mark.anyio

SECRET = "hunter2-correct-horse-battery"  # noqa: S105  # the text a redaction removes


def thoughtledger(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603  # our own command line, arguments of the test's own
        [sys.executable, "-m", "thoughtledger.adapters.cli", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def ledger_with_secret(path: Path) -> str:
    ledger = Ledger(await SqliteEventStore.open(path))
    try:
        session = await ledger.new_session()
        for number, text in enumerate(["plan", f"the password is {SECRET}", "done"], start=1):
            await session.process_sequential_thinking(
                thought=text, thought_number=number, total_thoughts=3, next_thought_needed=True
            )
        return session.id
    finally:
        await ledger.aclose()


def files_hold(path: Path, text: str) -> list[str]:
    """The names of the ledger's files (database, write-ahead log) whose bytes hold ``text``."""
    found = []
    for file in (path, path.with_name(path.name + "-wal")):
        if file.exists() and text.encode() in file.read_bytes():
            found.append(file.name)
    return found


async def test_redact_removes_the_text_from_the_database_files_and_the_ledger_verifies(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    session_id = await ledger_with_secret(path)
    assert files_hold(path, SECRET)
    url = sqlite_url(path)

    done = thoughtledger(
        "redact",
        session_id,
        "--thought",
        "2",
        "--reason",
        "a pasted password",
        "--by",
        "ops",
        "--db",
        url,
    )

    assert done.returncode == 0, done.stderr
    assert "redacted 1 thought event (#2)" in done.stdout
    assert files_hold(path, SECRET) == []
    verified = thoughtledger("verify", session_id, "--db", url)
    assert verified.returncode == 0, verified.stderr
    shown = json.loads(thoughtledger("show", session_id, "--db", url, "--json").stdout)
    second = shown["thoughts"][1]
    assert (second["thought"], second["redacted"], second["thoughtNumber"]) == (REDACTED, True, 2)
    again = thoughtledger(
        "redact", session_id, "--thought", "2", "--reason", "again", "--db", url, "--json"
    )
    assert again.returncode == 0, again.stderr
    assert (json.loads(again.stdout)["recorded"], json.loads(again.stdout)["stripped"]) == (0, 0)


async def test_the_text_is_gone_from_the_files_while_another_ledger_holds_them_open(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    session_id = await ledger_with_secret(path)
    ledger = Ledger(await SqliteEventStore.open(path))
    try:
        await ledger.redaction.redact(session_id, reason="erasure request", by="dpo")
        assert files_hold(path, SECRET) == []
        assert (await ledger.verify(session_id)).ok
    finally:
        await ledger.aclose()
    assert files_hold(path, SECRET) == []


async def test_a_reader_holding_the_log_delays_the_erasure_without_blocking_and_without_loss(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    session_id = await ledger_with_secret(path)
    # Another process reads, holding its snapshot (and so the write-ahead log) for a second.
    reader = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sqlite3, sys, time\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('BEGIN'); db.execute('SELECT count(*) FROM tl_events').fetchone()\n"
        "print('reading', flush=True); time.sleep(1.0); db.execute('COMMIT')\n",
        str(path),
        stdout=asyncio.subprocess.PIPE,
    )
    assert reader.stdout is not None
    assert (await reader.stdout.readline()).strip() == b"reading"
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ledger = Ledger(await SqliteEventStore.open(path))
    ticker = asyncio.create_task(tick())
    try:
        started = asyncio.get_running_loop().time()
        await ledger.redaction.redact(
            session_id, thought_number=2, reason="erasure request", by="dpo"
        )
        waited = asyncio.get_running_loop().time() - started
    finally:
        ticker.cancel()
        await ledger.aclose()
        await asyncio.wait_for(reader.communicate(), timeout=30)
    assert files_hold(path, SECRET) == []
    # It waited for the reader, and the event loop went on meanwhile.
    assert waited > 0.3
    assert ticks > waited / 0.01 / 4


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--thought", "9", "--reason", "x"], "has no thought 9"),
        (["--reason", " "], "needs a non-empty reason"),
        (["--thought", "0", "--reason", "x"], "argument --thought"),
        (["--thought", "1", "--version", "2", "--reason", "x"], "not allowed with argument"),
        ([], "the following arguments are required: --reason"),
    ],
)
async def test_bad_input_exits_non_zero_with_one_line_and_writes_nothing(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    path = tmp_path / "ledger.db"
    session_id = await ledger_with_secret(path)
    before = path.read_bytes()
    ran = thoughtledger("redact", session_id, *argv, "--db", sqlite_url(path))
    assert ran.returncode == 2
    assert message in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == before


async def test_an_unknown_session_or_a_missing_ledger_is_refused_and_nothing_is_created(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    await ledger_with_secret(path)
    unknown = thoughtledger("redact", "no-such-session", "--reason", "x", "--db", sqlite_url(path))
    assert unknown.returncode == 2
    assert "no session 'no-such-session'" in unknown.stderr
    missing = tmp_path / "missing.db"
    ran = thoughtledger("redact", "s", "--reason", "x", "--db", sqlite_url(missing))
    assert ran.returncode == 1
    assert len(ran.stderr.strip().splitlines()) == 1
    assert not missing.exists()


async def test_redacting_events_written_before_redaction_existed_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    ledger = Ledger(await SqliteEventStore.open(path))
    try:
        await raw_store(ledger).imports.import_records(legacy_session("old-one", ["a", SECRET]))
        # As an import through the ledger leaves it: the imported session's loops marked (a
        # writable opening would mark them otherwise, before the command is refused).
        await ledger.mark_loops()
    finally:
        await ledger.aclose()
    before = path.read_bytes()
    ran = thoughtledger("redact", "old-one", "--reason", "erasure", "--db", sqlite_url(path))
    assert ran.returncode == 2
    assert "written before redactable events existed" in ran.stderr
    assert path.read_bytes() == before


def redact_second_thought(
    capsys: pytest.CaptureFixture[str], source: Path, session_id: str
) -> None:
    """``thoughtledger redact SESSION --thought 2`` on ``source``, which must succeed."""
    redacted = cli(
        capsys,
        "redact",
        session_id,
        "--thought",
        "2",
        "--reason",
        "key",
        "--db",
        sqlite_url(source),
    )
    assert redacted.code == 0, redacted.err


def test_a_redacted_session_exports_and_imports_elsewhere_and_still_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source.db"
    session_id = asyncio.run(ledger_with_secret(source))
    redact_second_thought(capsys, source, session_id)
    export = tmp_path / "export.jsonl"
    lines = exported(capsys, sqlite_url(source), export, session_id)
    assert SECRET not in export.read_text()
    target = sqlite_url(tmp_path / "target.db")
    imported = cli(capsys, "import", str(export), "--db", target)
    assert imported.code == 0, imported.err
    assert cli(capsys, "verify", session_id, "--db", target).code == 0
    shown = cli(capsys, "show", session_id, "--db", target, "--json").json()
    assert shown["thoughts"][1]["thought"] == REDACTED
    assert [line["event_type"] for line in lines][-1] == "thought.redacted"


def test_importing_a_redaction_into_a_copy_that_holds_the_text_removes_it_there_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source.db"
    session_id = asyncio.run(ledger_with_secret(source))
    copy = tmp_path / "copy.db"
    export = tmp_path / "before.jsonl"
    exported(capsys, sqlite_url(source), export, session_id)
    assert cli(capsys, "import", str(export), "--db", sqlite_url(copy)).code == 0
    assert files_hold(copy, SECRET)
    redact_second_thought(capsys, source, session_id)
    after = tmp_path / "after.jsonl"
    exported(capsys, sqlite_url(source), after, session_id)

    imported = cli(capsys, "import", str(after), "--db", sqlite_url(copy))

    assert imported.code == 0, imported.err
    assert files_hold(copy, SECRET) == []
    assert cli(capsys, "verify", session_id, "--db", sqlite_url(copy)).code == 0
    shown = cli(capsys, "show", session_id, "--db", sqlite_url(copy), "--json").json()
    assert shown["thoughts"][1]["thought"] == REDACTED


def test_an_export_with_a_text_removed_but_no_redaction_event_is_refused_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source.db"
    session_id = asyncio.run(ledger_with_secret(source))
    lines = exported(capsys, sqlite_url(source), tmp_path / "all.jsonl", session_id)
    lines[2] = {**lines[2], "payload": strip(str(lines[2]["payload"]))}
    forged = tmp_path / "forged.jsonl"
    write_export(forged, lines)
    target = tmp_path / "target.db"
    ran = cli(capsys, "import", str(forged), "--db", sqlite_url(target))
    assert ran.code != 0
    assert "text is missing and no thought.redacted event explains it" in ran.err
    assert "nothing was imported" in ran.err
    assert not target.exists()


def test_redact_takes_the_ledger_url_like_every_command_and_leaves_vacuum_to_the_operator(
    capsys: pytest.CaptureFixture[str], ledger_url: str
) -> None:
    recorded = cli(capsys, "demo", "--db", ledger_url, "--json")
    assert recorded.code == 0, recorded.err
    session_id = recorded.json()["sessionId"]
    ran = cli(
        capsys, "redact", session_id, "--thought", "1", "--reason", "erasure",
        "--no-vacuum", "--db", ledger_url, "--json",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    assert ran.json()["stripped"] >= 1
    assert cli(capsys, "verify", session_id, "--db", ledger_url).code == 0
    shown = cli(capsys, "show", session_id, "--db", ledger_url, "--json").json()
    first = [t for t in shown["thoughts"] if t["thoughtNumber"] == 1]
    assert first
    assert all(t["thought"] == REDACTED and t["redacted"] for t in first)
