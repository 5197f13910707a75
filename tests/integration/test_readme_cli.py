"""The README's command-line walk-through works as written, on a fresh directory.

Every ``$ thoughtledger ... --db demo.db`` command of the README, then of the command line's page
(``docs/cli.md``, where the tour goes on), runs, in order, in an empty directory with no ledger
configured; the session id the README shows is replaced by the one the demo printed. Each
command's output must be the lines the page shows, where ``…`` stands for any text within a line
and a line of just ``…`` for any number of lines.
"""

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import cli
from tests.support.docs import (
    README,
    SHOWN_PREFIX,
    fenced_blocks,
    page,
    pages,
    pattern,
)

TOUR = [README, page("cli.md")]
"""The pages of the walk-through, in the order a reader follows them."""


@dataclass(frozen=True)
class Example:
    """One documented command and the output its page shows for it."""

    argv: list[str]
    shown: list[str]


def walkthrough() -> list[Example]:
    """The examples on ``demo.db`` of the tour's pages, in order."""
    examples: list[Example] = []
    for block in (block for path in TOUR for block in fenced_blocks(path, "")):
        current: Example | None = None
        for line in block.splitlines():
            if line.startswith("$ thoughtledger "):
                command = line.removeprefix("$ thoughtledger ").split("#", 1)[0]
                current = Example(shlex.split(command), [])
                if "demo.db" in command:
                    examples.append(current)
            elif current is not None:
                current.shown.append(line)
    for example in examples:
        while example.shown and not example.shown[-1].strip():
            example.shown.pop()  # the blank line before the next command
    return examples


def test_the_readme_walks_through_demo_show_and_diff() -> None:
    commands = [example.argv[0] for example in walkthrough()]
    assert commands[:3] == ["demo", "show", "diff"]


def test_the_readme_commands_print_what_the_readme_shows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh machine: an empty directory, no ledger configured, nothing in the data directory.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("THOUGHTLEDGER_URL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    demo, *others = walkthrough()
    ran = cli(capsys, *demo.argv)
    assert ran.code == 0, ran.err
    printed = re.search(r"thoughtledger show (\S+) --db demo\.db --at 5", ran.out)
    assert printed is not None, ran.out
    prefix = printed.group(1)
    session_id = re.search(rf"session ({re.escape(prefix)}[0-9a-f-]+) ·", ran.out)
    assert session_id is not None
    assert pattern(demo.shown, session_id.group(1)).fullmatch(ran.out), ran.out
    assert f"Recorded a sample session in {tmp_path / 'demo.db'}\n" in ran.out
    for example in others:
        argv = [prefix if arg == SHOWN_PREFIX else arg for arg in example.argv]
        ran = cli(capsys, *argv)
        assert ran.code == 0, (argv, ran.err)
        assert pattern(example.shown, session_id.group(1)).fullmatch(ran.out), (argv, ran.out)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["demo.db"]


def test_demo_prints_commands_that_work_when_pasted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A path with a space: the printed commands quote it, so each one runs as printed.
    folder = tmp_path / "my ledgers"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("THOUGHTLEDGER_URL", f"sqlite:///{tmp_path / 'real.db'}")
    ran = cli(capsys, "demo", "--db", str(folder / "demo.db"))
    assert ran.code == 0, ran.err
    suggested = [
        line.strip().removeprefix("thoughtledger ")
        for line in ran.out.split("Next, try:\n", 1)[1].splitlines()
    ]
    assert [shlex.split(line)[0] for line in suggested] == [
        "show",
        "diff",
        "replay",
        "stats",
        "verify",
    ]
    for line in suggested:
        again = cli(capsys, *shlex.split(line))
        assert again.code == 0, (line, again.err)
    assert not (tmp_path / "real.db").exists()  # $THOUGHTLEDGER_URL is never the demo's ledger


def test_demo_help_says_where_it_records_without_contradiction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ran = cli(capsys, "demo", "--help")
    assert ran.code == 0
    text = " ".join(ran.out.split())
    assert "--db FILE" in text
    assert "default: demo.db in your cache folder; $THOUGHTLEDGER_URL is not used" in text
    assert "default: $THOUGHTLEDGER_URL" not in text


def test_no_other_page_shows_a_demo_command_left_unrun() -> None:
    # The walk-through above runs the tour's pages; one moved to another page would go unchecked.
    shown = [
        f"{path.name}: {line}"
        for path in pages()
        if path not in TOUR
        for block in fenced_blocks(path, "")
        for line in block.splitlines()
        if line.startswith("$ thoughtledger ") and "demo.db" in line
    ]
    assert shown == []
