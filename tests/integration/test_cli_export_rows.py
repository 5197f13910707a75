"""``export --format csv|parquet``: one row per thought, the columns of the tl_thoughts view."""

import csv
import sqlite3
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.cli import cli, demo, snapshot, sqlite_url
from thoughtledger.ledger.store.columns import THOUGHT_COLUMNS


def test_csv_holds_one_row_per_thought_with_the_documented_columns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, ledger_url: str
) -> None:
    session = demo(capsys, ledger_url)
    target = tmp_path / "thoughts.csv"
    ran = cli(capsys, "export", "--all", "--format", "csv", "-o", str(target), "--db", ledger_url)
    assert ran.code == 0, ran.err
    assert ran.out == f"exported 9 thoughts as csv to {target}\n"
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == THOUGHT_COLUMNS
    assert [row["thought_number"] for row in rows] == ["1", "2", "3", "4", "5", "5", "6", "7", "8"]
    assert {row["session_id"] for row in rows} == {session}
    assert rows[3]["kind"] == "thought.revised"
    assert (rows[3]["is_revision"], rows[3]["revises_thought"]) == ("true", "2")
    assert rows[-1]["next_thought_needed"] == "false"
    assert target.stat().st_mode & 0o777 == 0o600


def test_parquet_keeps_types_and_a_chosen_session_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, ledger_url: str
) -> None:
    chosen = demo(capsys, ledger_url)
    demo(capsys, ledger_url)  # a second session, left out
    target = tmp_path / "thoughts.parquet"
    ran = cli(
        capsys, "export", chosen, "--format", "parquet", "-o", str(target), "--db", ledger_url
    )
    assert ran.code == 0, ran.err
    table = pq.read_table(target)
    assert tuple(table.column_names) == THOUGHT_COLUMNS
    assert table.num_rows == 9
    assert set(table.column("session_id").to_pylist()) == {chosen}
    assert str(table.schema.field("recorded_at").type) == "timestamp[us, tz=UTC]"
    assert table.column("next_thought_needed").to_pylist()[-1] is False
    assert table.column("branch_id").to_pylist().count("index") == 2


def test_parquet_to_standard_output_is_refused_without_writing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    demo(capsys, url)
    before = snapshot(tmp_path)
    ran = cli(capsys, "export", "--all", "--format", "parquet", "-o", "-", "--db", url)
    assert ran.code == 2
    assert "name one with -o FILE.parquet" in ran.err
    assert snapshot(tmp_path) == before


def test_a_ledger_from_before_the_views_exports_rows_read_only_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "ledger.db"
    demo(capsys, sqlite_url(path))
    with sqlite3.connect(path) as db:
        db.execute("DROP VIEW tl_thoughts")
        db.execute("DROP VIEW tl_session_stats")
        db.execute("DELETE FROM tl_schema WHERE version = 3")
    db.close()
    out = tmp_path / "out"
    out.mkdir()
    before = snapshot(tmp_path)
    ran = cli(capsys, "export", "--all", "--format", "csv", "-o", "-", "--db", sqlite_url(path))
    assert ran.code == 0, ran.err
    assert len(ran.out.splitlines()) == 10  # the header and nine thoughts
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--all"], "name the file to write with -o FILE"),
        (["--all", "--otlp", "http://127.0.0.1:9", "-o", "x.csv"], "drop -o and --format"),
        (["--all", "--otlp", "http://127.0.0.1:9", "--format", "csv"], "drop -o and --format"),
        (["--all", "--format", "xml", "-o", "x"], "invalid choice: 'xml'"),
    ],
)
def test_conflicting_or_missing_outputs_are_refused_without_writing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    demo(capsys, url)
    before = snapshot(tmp_path)
    ran = cli(capsys, "export", *argv, "--db", url)
    assert ran.code == 2
    assert message in ran.err
    assert len(ran.err.strip().splitlines()) <= 2  # argparse adds its usage line
    assert snapshot(tmp_path) == before
