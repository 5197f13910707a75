"""Bad input through ``main``: one clear line on stderr, exit 2 for usage, 1 for failures."""

import argparse
import asyncio
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import thoughtledger.api.figures
from tests.support.cli import cli, sqlite_url
from tests.support.samples import record_sample
from thoughtledger.adapters.cli.common import parse_time


@pytest.fixture
def url(tmp_path: Path) -> str:
    ledger = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(ledger))
    return ledger


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show", "s-x"], "no session 's-x' in this ledger; did you mean s-"),
        (["replay", "sb"], "no session 'sb' in this ledger; did you mean s-b?"),
        (["diff", "nothing-like-it", "0", "1"], "no session 'nothing-like-it' in this ledger; "),
        (["verify", "s-q"], "no session 's-q' in this ledger; did you mean"),
        (["show", "s-"], "'s-' matches several sessions: s-a, s-b, s-c, s-d, s-e"),
        (["show", "../etc/passwd"], "invalid session id '../etc/passwd'"),
        (["show", "s-a", "--as-of", "yesterday-ish"], "malformed time 'yesterday-ish'"),
        (["sessions", "--since", "2024-13-45"], "malformed time '2024-13-45'"),
        (["show", "s-a", "--at", "2", "--as-of", "1h"], "not allowed with argument"),
        (["show", "s-a", "--at", "0"], "expected a whole number >= 1, got '0'"),
        (["show", "s-a", "--at", "99"], "--at 99 is past the end of session s-a: it has 5 events"),
        (["show", "s-a", "--as-of", "2020-01-01"], "had no events yet at 2020-01-01"),
        (["diff", "s-a", "4", "2"], "A must be below B (got 4 and 2)"),
        (["diff", "s-a", "1", "9"], "version B (9) is past the end of session s-a"),
        (["verify", "s-a", "--all"], "give a SESSION or --all, not both"),
        (["stats", "--json", "--csv"], "argument --csv: not allowed with argument --json"),
        (["replay", "s-a", "--speed", "fast"], "a speed in events per second"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], url: str, argv: list[str], message: str
) -> None:
    ran = cli(capsys, *argv, "--db", url)
    assert ran.code == 2, ran.err
    assert ran.out == ""
    assert ran.err.startswith("thoughtledger: error: ")
    assert message in ran.err
    assert ran.err.count("\n") == 1


def test_a_file_that_is_not_a_ledger_fails_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("shopping list\n" * 100)
    ran = cli(capsys, "sessions", "--db", str(tmp_path / "notes.txt"))
    assert ran.code == 1
    assert ran.err == f"thoughtledger: error: {tmp_path / 'notes.txt'} is not an SQLite database\n"


def _shop(tmp_path: Path) -> Path:
    other = tmp_path / "shop.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    connection.close()
    return other


@pytest.mark.parametrize("command", [["demo"], ["import", "EXPORT"]])
def test_another_applications_database_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    other = _shop(tmp_path)
    before = other.read_bytes()
    export = tmp_path / "export.jsonl"
    export.write_text('{"manifest": {"format": 1, "sessions": []}}\n')
    argv = [str(export) if word == "EXPORT" else word for word in command]
    ran = cli(capsys, *argv, "--db", str(other))
    assert ran.code == 1
    assert ran.err.startswith(f"thoughtledger: error: {other} is another application's database")
    assert ran.err.count("\n") == 1
    assert other.read_bytes() == before


def test_serve_refuses_another_applications_database_in_one_line(tmp_path: Path) -> None:
    other = _shop(tmp_path)
    before = other.read_bytes()
    ran = subprocess.run(  # noqa: S603  # our own interpreter and module, no shell
        [sys.executable, "-m", "thoughtledger", "serve", "--db", str(other)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 1, ran.stderr
    assert f"{other} is another application's database" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert other.read_bytes() == before
    assert not Path(f"{other}-wal").exists()


def test_an_unknown_kind_of_ledger_url_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    ran = cli(capsys, "sessions", "--db", "mongodb://localhost/x")
    assert ran.code == 2
    assert "unknown ledger URL 'mongodb://localhost/x'" in ran.err


def test_an_unexpected_error_is_one_line_without_a_traceback(
    capsys: pytest.CaptureFixture[str], url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(thoughtledger.api.figures, "ledger_stats", broken)
    ran = cli(capsys, "stats", "--db", url)
    assert ran.code == 1
    assert ran.err == (
        "thoughtledger: error: unexpected RuntimeError: the disk is on fire "
        "(set THOUGHTLEDGER_DEBUG=1 to see where)\n"
    )


NOW = datetime(2024, 5, 1, 14, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01T14:02:03Z", datetime(2024, 5, 1, 14, 2, 3, tzinfo=UTC)),
        ("2024-05-01T16:02:03+02:00", datetime(2024, 5, 1, 14, 2, 3, tzinfo=UTC)),
        ("2024-05-01 14:02", datetime(2024, 5, 1, 14, 2, tzinfo=UTC)),
        ("2024-04-30", datetime(2024, 4, 30, tzinfo=UTC)),
        ("14:02", datetime(2024, 5, 1, 14, 2, tzinfo=UTC)),
        ("9:05:30.5", datetime(2024, 5, 1, 9, 5, 30, 500000, tzinfo=UTC)),
        ("15m", datetime(2024, 5, 1, 14, 15, tzinfo=UTC)),
        ("2h", datetime(2024, 5, 1, 12, 30, tzinfo=UTC)),
        ("1d", datetime(2024, 4, 30, 14, 30, tzinfo=UTC)),
        ("now", NOW),
    ],
)
def test_times_are_read_as_people_type_them_in_utc(text: str, expected: datetime) -> None:
    assert parse_time(text, now=NOW) == expected


@pytest.mark.parametrize("text", ["", "yesterday", "25:00", "2024-05", "5 parsecs", "-1h"])
def test_malformed_times_are_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="malformed time"):
        parse_time(text, now=NOW)
