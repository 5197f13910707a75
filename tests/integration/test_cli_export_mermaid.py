"""``thoughtledger export SESSION --format mermaid``: the session's graph as a flowchart."""

import json
from pathlib import Path

from tests.support.browser import record_demo
from tests.support.cli import sqlite_url
from tests.support.processes import thoughtledger


def test_export_writes_the_demo_graph_with_its_revision_branches_and_fork(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "l.db")
    session_id = record_demo(url)
    ran = thoughtledger("export", session_id, "--format", "mermaid", "-o", "-", "--db", url)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[:2] == [f"%% session {session_id}", "flowchart TD"]
    assert sum(line.startswith("    v") and '["' in line for line in lines) == 9
    edges = [line.strip() for line in lines if "-->" in line or ".->" in line]
    # The main line, the revision of #2 by #4 (v5), both branches from #3 (v4).
    assert "v3 -. revises .-> v5" in edges
    assert 'v4 -->|"branch replica"| v6' in edges
    assert 'v4 -->|"branch index"| v7' in edges
    assert "v7 --> v8" in edges
    assert "    class v4 origin" in lines

    forked = thoughtledger("fork", session_id, "--at", "4", "--db", url, "--json")
    fork_id = json.loads(forked.stdout)["sessionId"]
    target = tmp_path / "fork.mmd"
    ran = thoughtledger("export", fork_id, "--format", "mermaid", "-o", str(target), "--db", url)
    assert ran.returncode == 0, ran.stderr
    # A fork's own events hold no thought yet: the chart says where it comes from.
    chart = target.read_text().splitlines()
    assert chart[:3] == [
        f"%% session {fork_id}",
        "flowchart TD",
        f'    fork(["forked from {session_id} at version 4"])',
    ]
    assert not any(line.startswith("    v") for line in chart)
    again = thoughtledger("export", fork_id, "--format", "mermaid", "-o", str(target), "--db", url)
    assert again.returncode == 1
    assert "exists" in again.stderr
