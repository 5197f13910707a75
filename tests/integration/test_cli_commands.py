"""The reading commands through ``main``: demo, sessions, show, replay, diff, serve."""

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from rich.console import Console

import thoughtledger.adapters.cli.replay
from tests.support.cli import cli, demo, sqlite_url
from tests.support.samples import record_sample
from thoughtledger.adapters.cli.common import Ui
from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.mcp.serve import ServeParts


def test_demo_records_a_session_with_revisions_and_branches_and_shows_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "demo.db")
    ran = cli(capsys, "demo", "--db", url)
    assert ran.code == 0
    assert ran.err == ""
    assert f"Recorded a sample session in {tmp_path / 'demo.db'}\n" in ran.out
    assert "9 thoughts, 1 revision, 2 branches · complete" in ran.out
    assert "↺ revises #2" in ran.out
    assert "(revised by #4)" in ran.out
    assert "⑂ branch replica from #3" in ran.out
    assert "thoughtledger verify --db" in ran.out
    assert "\x1b[" not in ran.out  # plain text when not a terminal


def test_demo_without_db_uses_one_file_in_the_cache_folder_never_the_configured_ledger(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real.db"
    monkeypatch.setenv("THOUGHTLEDGER_URL", sqlite_url(real))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temporary"))
    (tmp_path / "temporary").mkdir()
    first, second = cli(capsys, "demo", "--json"), cli(capsys, "demo", "--json")
    assert (first.code, second.code) == (0, 0)
    scratch = first.json()["db"]
    assert scratch == str(tmp_path / "cache" / "thoughtledger" / "demo.db")
    assert second.json()["db"] == scratch  # one file, a session more: no folder per run
    assert list((tmp_path / "temporary").iterdir()) == []
    assert not real.exists()
    assert [s["thoughts"] for s in cli(capsys, "sessions", "--db", scratch, "--json").json()] == [
        9,
        9,
    ]


def test_sessions_lists_each_session_with_its_figures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(url))
    ran = cli(capsys, "sessions", "--db", url)
    assert ran.code == 0
    lines = ran.out.splitlines()
    assert lines[0].split() == [
        "session", "agent", "client", "first", "thought", "thoughts", "revisions", "branches",
        "status", "started", "last", "activity",
    ]  # fmt: skip
    assert [line.split()[0] for line in lines[1:]] == ["s-c", "s-e", "s-d", "s-b", "s-a"]
    assert lines[1].split()[1:8] == ["coder", "desktop", "thought", "1", "1", "0", "0"]
    assert "cleared" in lines[1]
    assert all(line == line.rstrip() for line in lines)
    listed = cli(capsys, "sessions", "--db", url, "--json").json()
    by_id = {item["sessionId"]: item for item in listed}
    assert by_id["s-b"] | {"startedAt": None, "updatedAt": None} == {
        "sessionId": "s-b",
        "firstThought": "thought 1",
        "thoughts": 4,
        "revisions": 0,
        "branches": 2,
        "status": "branch",
        "startedAt": None,
        "updatedAt": None,
        "agent": "planner",
        "client": "cursor",
        "owner": None,
    }


def test_sessions_filters_by_status_agent_time_and_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(url))

    def ids(*options: str) -> list[str]:
        ran = cli(capsys, "sessions", "--db", url, "--json", *options)
        assert ran.code == 0, ran.err
        return sorted(item["sessionId"] for item in ran.json())

    assert ids("--status", "complete") == ["s-a", "s-d"]
    assert ids("--status", "open") == ["s-b", "s-e"]
    assert ids("--agent", "planner") == ["s-a", "s-b"]
    assert ids("--since", "2024-05-02") == ["s-c", "s-d", "s-e"]
    assert ids("--limit", "2") == ["s-c", "s-e"]


def test_show_draws_branches_under_their_origin_and_marks_revisions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(url))
    ran = cli(capsys, "show", "s-b", "--db", url)
    assert ran.code == 0
    lines = ran.out.splitlines()
    # Branch y's "thought 2" says again what branch x's did: a loop, counted and marked.
    assert lines[0].startswith(
        "session s-b · 4 thoughts, 0 revisions, 2 branches · ⟳ 1 repeat · branch"
    )
    assert lines[1].startswith("└── #1 thought 1")
    assert lines[2].startswith("    ├── ⑂ branch x from #1")
    assert lines[3].startswith("    │   ├── #2 thought 2")
    assert lines[4].startswith("    │   └── #3 thought 3")
    assert lines[5].startswith("    └── ⑂ branch y from #1")
    assert lines[6].startswith("        └── #2 ⟳ repeats #2 (v3): thought 2")
    revised = cli(capsys, "show", "s-a", "--db", url).out
    assert "#1 thought 1  (revised by #3)" in revised
    assert "#3 ↺ revises #1: thought 3" in revised
    assert "#4 thought 4  ✓ done" in revised


def test_show_travels_back_to_a_version_or_a_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(url))
    at = cli(capsys, "show", "s-a", "--db", url, "--at", "3")
    assert at.code == 0
    assert "2 thoughts" in at.out
    assert "(as of version 3 of 5" in at.out
    # s-a's events were recorded at 23:59:01.5, 23:59:08.75, 23:59:09.5 and 23:59:39.5.
    earlier = cli(capsys, "show", "s-a", "--db", url, "--as-of", "2024-05-01T23:59:09Z", "--json")
    assert [t["thoughtNumber"] for t in earlier.json()["thoughts"]] == [1, 2]
    assert earlier.json()["version"] == 3
    later = cli(capsys, "show", "s-a", "--db", url, "--as-of", "2024-05-01 23:59:10", "--json")
    later = later.json()
    assert [t["thoughtNumber"] for t in later["thoughts"]] == [1, 2, 3]


def test_show_accepts_a_unique_prefix_and_prints_every_field_as_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    session_id = demo(capsys, url)
    shown = cli(capsys, "show", session_id[:13], "--db", url, "--json").json()
    assert shown["sessionId"] == session_id
    assert shown["status"] == "complete"
    assert shown["metadata"]["agent"] == "sre-assistant"
    assert [b["branchId"] for b in shown["branches"]] == ["replica", "index"]
    revision = shown["thoughts"][3]
    assert (revision["kind"], revision["revisesThought"]) == ("thought.revised", 2)


def test_replay_prints_every_step_with_its_view_when_piped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    session_id = demo(capsys, url)
    ran = cli(capsys, "replay", session_id, "--db", url)
    assert ran.code == 0
    steps = [line for line in ran.out.splitlines() if line.startswith("[")]
    assert len(steps) == 10
    assert steps[0].startswith("[1/10] v1 ")
    assert "session.started  session started (agent=sre-assistant" in steps[0]
    assert "branch.opened  #5 opens branch replica from #3: Option A" in steps[5]
    assert "    → 9 thoughts, 1 revision, 2 branches · thought 8 of 8 · complete" in ran.out


def test_replay_as_json_lines_carries_each_event_and_the_view_after_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    session_id = demo(capsys, url)
    lines = [
        json.loads(line)
        for line in cli(capsys, "replay", session_id, "--db", url, "--json").out.splitlines()
    ]
    assert [line["step"] for line in lines] == list(range(1, 11))
    assert lines[1]["event"]["type"] == "thought.recorded"
    assert lines[1]["view"]["thoughtHistoryLength"] == 1
    assert lines[-1]["view"]["branches"] == ["replica", "index"]
    assert "summary" in lines[-1]["view"]


def test_replay_on_a_terminal_waits_for_keys_and_stops_at_q(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    session_id = demo(capsys, url)
    keys = iter([" ", "\r", "q"])
    waits: list[float | None] = []

    @contextmanager
    def scripted() -> Iterator[thoughtledger.adapters.cli.replay.KeyReader]:
        def read(timeout: float | None) -> str:
            waits.append(timeout)
            return next(keys)

        yield read

    terminal = Console(file=sys.stdout, force_terminal=True, width=100)
    monkeypatch.setattr(Ui, "create", classmethod(lambda cls: cls(terminal, terminal)))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(thoughtledger.adapters.cli.replay, "_keys", scripted)
    ran = cli(capsys, "replay", session_id, "--db", url)
    assert ran.code == 0
    assert waits == [None, None, None]
    assert "[3/10]" in ran.out
    assert "[4/10]" not in ran.out
    assert "Enter/space: next" in ran.out


def test_diff_lists_the_events_between_two_versions_and_what_moved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    session_id = demo(capsys, url)
    ran = cli(capsys, "diff", session_id, "3", "6", "--db", url)
    assert ran.code == 0
    added = [line for line in ran.out.splitlines() if line.startswith("+ ")]
    assert [line.split()[1] for line in added] == ["v4", "v5", "v6"]
    assert "#4 revises #2: Correction" in added[1]
    assert any(line.split() == ["branches", "0", "1", "*"] for line in ran.out.splitlines())
    data = cli(capsys, "diff", session_id, "0", "10", "--db", url, "--json").json()
    assert len(data["events"]) == 10
    assert data["before"] == {
        "thoughts": 0,
        "revisions": 0,
        "branches": 0,
        "actions": 0,
        "totalThoughts": None,
        "status": "empty",
    }
    assert data["after"]["status"] == "complete"


def test_every_command_honours_thoughtledger_url(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = sqlite_url(tmp_path / "env.db")
    session_id = demo(capsys, url)
    monkeypatch.setenv("THOUGHTLEDGER_URL", url)
    assert cli(capsys, "sessions", "--json").json()[0]["sessionId"] == session_id
    assert cli(capsys, "verify").code == 0
    assert cli(capsys, "stats", "--json").json()["overall"]["sessions"] == 1


def test_serve_hands_its_options_to_the_mcp_server(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from thoughtledger.adapters.mcp import serve

    seen: list[str | None] = []
    handed: list[ServeParts] = []

    def run_serve(args: argparse.Namespace, parts: ServeParts) -> int:
        seen.append(args.db)
        handed.append(parts)
        return 7

    monkeypatch.setattr(serve, "run_serve", run_serve)
    assert cli(capsys, "serve", "--db", "sqlite:///x.db").code == 7
    assert seen == ["sqlite:///x.db"]
    # The served model is the one the environment configures, opened by the server per lifespan.
    assert isinstance(handed[0].model_writer(), LLMWriter)
    helped = cli(capsys, "serve", "--help")
    assert helped.code == 0
    assert "--http" in helped.out


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    ran = cli(capsys, "--help")
    assert ran.code == 0
    for name in ("sessions", "show", "replay", "diff", "verify", "stats", "export", "import"):
        assert name in ran.out
    assert "demo" in ran.out
    assert "serve" in ran.out
