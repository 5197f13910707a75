"""The actions an agent took, where the command line shows a session: ``show`` (the tree, a page,
``--json``), ``diff`` and ``replay``, and the rows of ``export --format csv|parquet --actions``."""

import asyncio
import csv
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.support import acting
from tests.support.cli import cli, snapshot, sqlite_url
from thoughtledger import open_ledger
from thoughtledger.ledger.store.columns import ACTION_COLUMNS

READ_FILE = '↳ called [link=https://example.org]read_file[/link]({"path": "[bold red]cache.py[/]"})'
"""The second action's line as shown: its name and arguments as sent, never read as markup."""


def captured(url: str) -> None:
    """Record the acting session (:mod:`tests.support.acting`) into the ledger at ``url``."""

    async def record() -> None:
        async with open_ledger(url) as ledger:
            await acting.record(ledger.as_principal(None))

    asyncio.run(record())


def test_show_hangs_each_action_under_the_thought_it_followed_as_plain_text(
    capsys: pytest.CaptureFixture[str], ledger_url: str
) -> None:
    captured(ledger_url)
    ran = cli(capsys, "show", acting.SESSION, "--db", ledger_url)
    assert ran.code == 0, ran.err
    lines = ran.out.splitlines()
    assert "2 thoughts, 0 revisions, 0 branches, 4 actions" in lines[0]

    def at(text: str) -> tuple[int, int]:
        [(row, column)] = [(n, line.find(text)) for n, line in enumerate(lines) if text in line]
        return row, column

    before, first = at("↳ called list_files({})"), at("#1 The cache misses")
    read, run = at(READ_FILE), at("↳ called run(")
    second, edit = at("#2 The key holds"), at('↳ called edit_file({"line": 3})')
    assert before[0] < first[0] < read[0] < run[0] < second[0] < edit[0]
    # The call before any thought hangs from the root; the others under their thought.
    assert before[1] == first[1] < read[1] == run[1]
    assert edit[1] == read[1]
    # A terminal escape in the arguments is shown, never sent.
    assert '↳ called run({"cmd": "echo \\x1b[2J"})' in lines[run[0]]
    assert "\x1b" not in ran.out


def test_show_json_lists_each_action_as_kept_now_and_as_of_a_version(
    capsys: pytest.CaptureFixture[str], ledger_url: str
) -> None:
    captured(ledger_url)
    data = cli(capsys, "show", acting.SESSION, "--db", ledger_url, "--json").json()
    actions = data["actions"]
    assert [a["name"] for a in actions] == acting.NAMES
    assert [a["version"] for a in actions] == acting.VERSIONS
    assert [a["afterThought"] for a in actions] == acting.AFTER
    assert actions[1]["arguments"] == acting.MARKUP
    assert actions[2]["arguments"] == acting.ESCAPE  # JSON keeps the exact text
    assert (actions[1]["callId"], actions[1]["argumentsCut"]) == ("call_1", False)
    assert (actions[1]["traceId"], actions[1]["spanId"]) == (
        acting.SPAN.trace_id,
        acting.SPAN.span_id,
    )
    earlier = cli(capsys, "show", acting.SESSION, "--at", "4", "--db", ledger_url, "--json")
    assert [a["version"] for a in earlier.json()["actions"]] == [2, 4]


def test_a_page_of_show_lists_each_action_with_the_thought_it_followed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    captured(url)
    pages: list[dict[str, Any]] = []
    after: list[str] = []
    while True:
        ran = cli(capsys, "show", acting.SESSION, "--limit", "1", *after, "--db", url, "--json")
        assert ran.code == 0, ran.err
        pages.append(ran.json())
        if pages[-1]["nextCursor"] is None:
            break
        after = ["--after", pages[-1]["nextCursor"]]
    assert [a["version"] for page in pages for a in page["actions"]] == acting.VERSIONS
    listed = cli(capsys, "show", acting.SESSION, "--limit", "2", "--db", url).out.splitlines()
    assert any(line.strip().startswith(READ_FILE + " after #1") for line in listed)
    assert listed[-1].strip().startswith('↳ called edit_file({"line": 3}) after #2')


def test_diff_counts_the_actions_between_two_versions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    captured(url)
    data = cli(capsys, "diff", acting.SESSION, "3", "7", "--db", url, "--json").json()
    assert (data["before"]["actions"], data["after"]["actions"]) == (1, 4)
    shown = cli(capsys, "diff", acting.SESSION, "3", "7", "--db", url).out.splitlines()
    assert ["actions", "1", "4", "*"] in [line.split() for line in shown]
    assert any("action after #2 edit_file" in line for line in shown)


def test_export_rows_of_actions_as_csv_and_parquet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, ledger_url: str
) -> None:
    captured(ledger_url)
    target = tmp_path / "actions.csv"
    argv = ["export", "--all", "--actions", "--db", ledger_url]
    ran = cli(capsys, *argv, "--format", "csv", "-o", str(target))
    assert ran.code == 0, ran.err
    assert ran.out == f"exported 4 actions as csv to {target}\n"
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == ACTION_COLUMNS
    assert [row["name"] for row in rows] == acting.NAMES
    assert [row["after_thought"] for row in rows] == ["", "1", "1", "2"]
    assert rows[1]["arguments"] == acting.MARKUP
    assert {(row["session_id"], row["agent"], row["client"]) for row in rows} == {
        (acting.SESSION, "planner", "tests")
    }

    parquet = tmp_path / "actions.parquet"
    ran = cli(capsys, *argv, "--format", "parquet", "-o", str(parquet))
    assert ran.code == 0, ran.err
    table = pq.read_table(parquet)
    assert tuple(table.column_names) == ACTION_COLUMNS
    assert table.column("version").to_pylist() == acting.VERSIONS
    assert table.column("after_thought").to_pylist() == acting.AFTER
    assert table.column("arguments_cut").to_pylist() == [False] * 4
    assert str(table.schema.field("recorded_at").type) == "timestamp[us, tz=UTC]"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--actions", "-o", "x.jsonl"], "--actions lists rows: give it with --format csv"),
        (["--annotations", "--format", "html", "-o", "x.html"], "--annotations lists rows"),
        (["--actions", "--annotations", "--format", "csv", "-o", "x.csv"], "not allowed with"),
    ],
)
def test_rows_of_actions_need_a_format_of_rows_and_nothing_is_written_otherwise(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    message: str,
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    captured(url)
    monkeypatch.chdir(tmp_path)  # where the file named would be written
    before = snapshot(tmp_path)
    ran = cli(capsys, "export", "--all", *argv, "--db", url)
    assert ran.code == 2
    assert message in ran.err
    assert snapshot(tmp_path) == before
