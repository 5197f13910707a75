"""``thoughtledger fork`` end to end: real processes on a real SQLite file."""

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from thoughtledger.ledger.events import SessionStarted
from thoughtledger.ledger.store.sqlite import SqliteEventStore

pytestmark = pytest.mark.anyio


def thoughtledger(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603  # our own command line, arguments of the test's own
        [sys.executable, "-m", "thoughtledger.adapters.cli", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def as_json(*argv: str) -> Any:
    ran = thoughtledger(*argv, "--json")
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def test_fork_starts_a_session_from_the_source_at_a_version_and_show_links_both(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "ledger.db")
    source = as_json("demo", "--db", db)["sessionId"]

    forked = as_json("fork", source[:13], "--at", "4", "--db", db)

    assert forked["forkOf"] == source
    assert forked["forkVersion"] == 4
    assert forked["thoughtCount"] == 3  # the start, then thoughts 1-3
    fork = as_json("show", forked["sessionId"], "--db", db)
    assert fork["forkOf"] == {"sessionId": source, "version": 4, "hash": forked["forkHash"]}
    assert fork["inheritedThoughts"] == 3
    assert len(fork["thoughts"]) == 3
    assert as_json("show", source, "--db", db)["forks"] == [forked["sessionId"]]
    shown = thoughtledger("show", forked["sessionId"], "--db", db)
    assert f"forked from {source} at version 4" in shown.stdout
    checked = thoughtledger("verify", "--all", "--db", db)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_fork_past_the_source_end_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")
    source = as_json("demo", "--db", db)["sessionId"]
    before = Path(db).read_bytes()

    ran = thoughtledger("fork", source, "--at", "999", "--db", db)

    assert ran.returncode == 2
    assert "cannot be forked at version 999" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert len(as_json("sessions", "--db", db)) == 1
    assert Path(db).read_bytes() == before


async def test_verify_fails_a_fork_whose_source_hash_does_not_match(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    source = as_json("demo", "--db", str(path))["sessionId"]
    store = await SqliteEventStore.open(path)
    try:
        forged = SessionStarted(fork_of=source, fork_version=3, fork_hash="ab" * 32)
        await store.append("forged-fork", [forged], expected_version=0)
    finally:
        await store.aclose()

    ran = thoughtledger("verify", "--all", "--db", str(path))

    assert ran.returncode != 0
    assert "forged-fork" in ran.stdout + ran.stderr
    assert f"forked from {source} at version 3" in ran.stdout + ran.stderr


def test_a_forks_tree_numbers_its_own_versions_once_and_its_sources_as_the_sources(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "ledger.db")
    source = as_json("demo", "--db", db)["sessionId"]
    # At version 7 the source has both branches; the fork goes on along one of them.
    fork = as_json("fork", source, "--at", "7", "--db", db)["sessionId"]
    calls = tmp_path / "calls.jsonl"
    own = [
        {
            "thought": "Own: extend the index branch",
            "thoughtNumber": 6,
            "totalThoughts": 7,
            "nextThoughtNeeded": True,
            "branchFromThought": 3,
            "branchId": "index",
        },
        {
            "thought": "Own: conclude",
            "thoughtNumber": 7,
            "totalThoughts": 7,
            "nextThoughtNeeded": False,
        },
    ]
    calls.write_text("".join(json.dumps({**call, "sessionId": fork[:18]}) + "\n" for call in own))
    recorded = thoughtledger("record", str(calls), "--db", db)
    assert recorded.returncode == 0, recorded.stderr
    shown = thoughtledger("show", fork, "--db", db)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "· 8 thoughts (6 from its source), 1 revision, 2 branches ·" in lines[0]
    own_versions = [v for line in lines for v in re.findall(r"\[v(\d+) ·", line)]
    source_versions = [v for line in lines for v in re.findall(r"\[source v(\d+) ·", line)]
    assert own_versions == ["2", "3"]  # the fork's own events after its start, each once
    assert sorted(source_versions, key=int) == ["2", "3", "4", "5", "6", "7"]
    # The thought it added to the inherited branch hangs under that branch, after Option B.
    index = next(i for i, line in enumerate(lines) if "branch index" in line)
    assert "Option B" in lines[index + 1]
    assert "Own: extend the index branch" in lines[index + 2]
    as_data = as_json("show", fork, "--db", db)
    sources = [item.get("source") for item in as_data["thoughts"]]
    assert sources == [source] * 6 + [None, None]
    # A page lists the fork's own thoughts in its own versions, and says where the rest are.
    paged = thoughtledger("show", fork, "--limit", "5", "--db", db)
    assert paged.returncode == 0, paged.stderr
    head, *items, where = paged.stdout.splitlines()
    # One count of its thoughts, paged or whole, as the API's state and pages give it.
    assert "· 8 thoughts (the first from its source) ·" in head
    page = as_json("show", fork, "--limit", "5", "--db", db)
    assert page["thoughtHistoryLength"] == len(as_data["thoughts"]) == 8
    assert [re.findall(r"\[v(\d+) ·", item) for item in items] == [["2"], ["3"]]
    assert where == (
        f"forked from {source} at version 7: its earlier thoughts are the source's "
        f"(thoughtledger show {source} --at 7)"
    )
