"""Paged ``thoughtledger show`` carries the annotations of the thoughts on its page."""

import json
from pathlib import Path
from typing import Any

from tests.support.cli import sqlite_url
from tests.support.processes import thoughtledger


def _ok(*argv: str) -> str:
    ran = thoughtledger(*argv)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def _demo(db: str) -> str:
    session_id: str = json.loads(_ok("demo", "--db", db, "--json"))["sessionId"]
    return session_id


def _annotate(db: str, session_id: str, number: int, label: str, *more: str) -> int:
    answer: dict[str, Any] = json.loads(
        _ok("annotate", session_id, str(number), "--label", label, *more, "--db", db, "--json")
    )
    version: int = answer["version"]
    return version


def test_a_page_lists_the_annotations_of_its_own_thoughts_only(tmp_path: Path) -> None:
    db = sqlite_url(tmp_path / "ledger.db")
    session_id = _demo(db)
    _annotate(db, session_id, 1, "clear", "--score", "4", "--by", "rev", "--note", "good\nstart")
    _annotate(db, session_id, 3, "shaky", "--by", "rev")

    first = _ok("show", session_id, "--limit", "2", "--db", db)
    lines = first.splitlines()
    assert lines[1].startswith("#1 ")
    assert lines[2].strip().startswith("✎ #1 clear (4) by rev: good")
    assert len(lines) == 4  # the headline, #1, its note on one line, #2
    assert "shaky" not in first  # thought 3 is not on this page

    shown = json.loads(_ok("show", session_id, "--limit", "2", "--json", "--db", db))
    assert [(note["thoughtNumber"], note["label"]) for note in shown["annotations"]] == [
        (1, "clear")
    ]
    assert shown["annotations"][0]["score"] == 4
    later = json.loads(_ok("show", session_id, "--limit", "3", "--json", "--db", db))
    assert [note["label"] for note in later["annotations"]] == ["clear", "shaky"]


def test_a_page_as_of_a_version_shows_the_annotations_recorded_by_then(tmp_path: Path) -> None:
    db = sqlite_url(tmp_path / "ledger.db")
    session_id = _demo(db)
    first_note = _annotate(db, session_id, 1, "early")
    _annotate(db, session_id, 1, "late")

    then = json.loads(
        _ok("show", session_id, "--limit", "2", "--at", str(first_note), "--json", "--db", db)
    )
    assert [note["label"] for note in then["annotations"]] == ["early"]
    now = _ok("show", session_id, "--limit", "2", "--db", db)
    assert "✎ #1 early" in now
    assert "✎ #1 late" in now
