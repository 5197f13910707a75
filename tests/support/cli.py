"""Running ``thoughtledger`` in this process: its output, export files, the reading commands."""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.samples import SAMPLE_IDS
from thoughtledger.adapters.cli import main


@dataclass(frozen=True)
class Ran:
    """What one run of the command line did."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Ran:
    """Run ``thoughtledger ARGV`` in this process and capture what it printed."""
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return Ran(code, captured.out, captured.err)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def demo(capsys: pytest.CaptureFixture[str], url: str) -> str:
    """Record the demo session into ``url``; return its id."""
    ran = cli(capsys, "demo", "--db", url, "--json")
    assert ran.code == 0, ran.err
    session_id: str = ran.json()["sessionId"]
    return session_id


def exported(
    capsys: pytest.CaptureFixture[str], url: str, target: Path, *sessions: str
) -> list[dict[str, object]]:
    """Export into ``target``; return its event lines (checking that the manifest ends it)."""
    scope = list(sessions) or ["--all"]
    ran = cli(capsys, "export", *scope, "-o", str(target), "--db", url, "--force")
    assert ran.code == 0, ran.err
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert set(lines[-1]) == {"manifest"}
    return lines[:-1]


def write_export(target: Path, lines: list[dict[str, object]]) -> None:
    """Write event lines as an export, ended by the manifest an export of them ends with."""
    sessions: dict[object, dict[str, object]] = {}
    for line in lines:
        entry = sessions.setdefault(line["session_id"], {"session_id": line["session_id"]})
        entry.update(version=line["version"], hash=line["hash"])
        entry["events"] = int(str(entry.get("events", 0))) + 1
    manifest = {"manifest": {"format": 1, "sessions": list(sessions.values())}}
    target.write_text("".join(json.dumps(line) + "\n" for line in [*lines, manifest]))


def views(capsys: pytest.CaptureFixture[str], url: str) -> dict[str, object]:
    """``show --json`` of every sample session in ``url``."""
    return {s: cli(capsys, "show", s, "--db", url, "--json").json() for s in SAMPLE_IDS}


READS = [
    ["sessions"],
    ["show", "s-a"],
    ["replay", "s-a"],
    ["diff", "s-a", "0", "1"],
    ["verify"],
    ["stats"],
    ["export", "--all", "-o", "{out}"],
]
"""Every command that only reads, with the arguments it needs ({out}: an export file)."""


def command_id(argv: list[str]) -> str:
    return argv[0]


def snapshot(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` (the database and any -wal, -shm or journal) with its SHA-256."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.iterdir())
        if path.is_file()
    }
