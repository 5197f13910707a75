"""Loops through the command line in a real process: ``show`` marks a repeat, ``stats`` counts it.

The session is recorded through the Python API into an SQLite file or a PostgreSQL schema, then
read by ``thoughtledger`` in a child process, as a person would.
"""

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import cli
from tests.support.otlp import attributes, otlp_receiver
from tests.support.processes import thoughtledger
from thoughtledger.api import open_ledger, open_store
from thoughtledger.ledger.events import ThoughtRecorded

THOUGHTS = [
    "Check the config file for the port.",
    "The port is not set there; look at the environment.",
    "check the CONFIG file, for the port",  # the first again, once normalised
    "Something new entirely.",
]


async def _record(url: str) -> None:
    async with open_ledger(url, ttl=None) as ledger:
        looping = ledger.session("looping", metadata={"agent": "planner"})
        for number, text in enumerate(THOUGHTS, start=1):
            await looping.think(
                thought=text, thought_number=number, total_thoughts=4, next_thought_needed=True
            )
        plain = ledger.session("plain", metadata={"agent": "coder"})
        await plain.think(
            thought="One thought.", thought_number=1, total_thoughts=1, next_thought_needed=False
        )


def test_show_marks_the_repeat_and_stats_counts_the_session(ledger_url: str) -> None:
    asyncio.run(_record(ledger_url))

    shown = thoughtledger("show", "looping", "--db", ledger_url)
    assert shown.returncode == 0, shown.stderr
    repeat_lines = [line for line in shown.stdout.splitlines() if "⟳ repeats" in line]
    assert len(repeat_lines) == 1
    assert "#3 ⟳ repeats #1 (v2)" in repeat_lines[0]
    assert "1 repeat" in shown.stdout.splitlines()[0]

    as_json = thoughtledger("show", "looping", "--json", "--db", ledger_url)
    assert json.loads(as_json.stdout)["repeats"] == [
        {
            "version": 4,
            "thoughtNumber": 3,
            "repeatsVersion": 2,
            "repeatsThoughtNumber": 1,
            "similarity": 1.0,
        }
    ]
    assert (
        json.loads(thoughtledger("show", "plain", "--json", "--db", ledger_url).stdout)["repeats"]
        == []
    )

    # On PostgreSQL while other transactions are in flight too: what the log's pages do not
    # show yet is read from the sessions' streams.
    figures = json.loads(thoughtledger("stats", "--loops", "--json", "--db", ledger_url).stdout)
    assert figures["loops"] == {
        "sessions": 2,
        "sessionsWithLoops": 1,
        "repeats": 1,
        "repeatsPerSession": [{"sessionId": "looping", "repeats": 1}],
    }
    by_default = thoughtledger("stats", "--json", "--db", ledger_url)
    assert json.loads(by_default.stdout)["loops"] == figures["loops"]
    skipped = thoughtledger("stats", "--no-loops", "--json", "--db", ledger_url)
    assert json.loads(skipped.stdout)["loops"] is None
    coder = thoughtledger("stats", "--loops", "--agent", "coder", "--json", "--db", ledger_url)
    assert json.loads(coder.stdout)["loops"]["sessionsWithLoops"] == 0

    table = thoughtledger("stats", "--loops", "--db", ledger_url)
    assert table.returncode == 0, table.stderr
    assert "sessions with loops" in table.stdout
    assert "looping" in table.stdout


async def _append_unmarked(url: str) -> None:
    """The looping session's first thought again, written through the store alone (no marks)."""
    store = await open_store(url)
    try:
        head = await store.stream_head("looping")
        assert head is not None
        again = ThoughtRecorded(
            thought=THOUGHTS[0], thought_number=5, total_thoughts=5, next_thought_needed=False
        )
        await store.append("looping", [again], expected_version=head.version)
    finally:
        await store.aclose()


def test_stats_counts_loops_by_default_and_folds_a_session_whose_marks_are_behind(
    ledger_url: str,
) -> None:
    asyncio.run(_record(ledger_url))
    asyncio.run(_append_unmarked(ledger_url))  # the session is now behind on its marks

    # Read-only, nothing is marked: the session behind is folded, the figures are the fold's.
    ran = thoughtledger("stats", "--json", "--db", ledger_url)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["loops"] == {
        "sessions": 2,
        "sessionsWithLoops": 1,
        "repeats": 2,
        "repeatsPerSession": [{"sessionId": "looping", "repeats": 2}],
    }
    table = thoughtledger("stats", "--db", ledger_url)
    assert table.returncode == 0, table.stderr
    assert "sessions with loops" in table.stdout
    assert "1 (50.0%)" in table.stdout
    assert "2 thoughts repeat an earlier one" in table.stdout
    assert (
        "sessions with loops" not in thoughtledger("stats", "--no-loops", "--db", ledger_url).stdout
    )


def test_an_imported_session_has_its_repeats_in_the_views_once_imported(
    ledger_url: str, tmp_path: Path
) -> None:
    asyncio.run(_record(ledger_url))
    lines = tmp_path / "ledger.jsonl"
    exported = thoughtledger("export", "--all", "-o", str(lines), "--db", ledger_url)
    assert exported.returncode == 0, exported.stderr
    elsewhere = tmp_path / "elsewhere.db"
    imported = thoughtledger("import", str(lines), "--db", f"sqlite:///{elsewhere}")
    assert imported.returncode == 0, imported.stderr

    with sqlite3.connect(elsewhere) as db:
        rows = db.execute("SELECT * FROM tl_session_loops ORDER BY session_id").fetchall()
        marks = db.execute("SELECT * FROM tl_loops").fetchall()
        counted = db.execute(
            "SELECT count(*), sum(repeats) FROM tl_session_loops WHERE repeats > 0"
        ).fetchone()
    db.close()
    assert rows == [("looping", 1, 1), ("plain", 0, 1)]
    assert marks == [("looping", 4, 2, 1.0)]
    assert counted == (1, 1)


def test_the_spans_name_the_thought_a_repeat_repeats_and_the_session_counts_them(
    capsys: pytest.CaptureFixture[str], ledger_url: str
) -> None:
    asyncio.run(_record(ledger_url))
    with otlp_receiver() as (endpoint, received):
        ran = cli(capsys, "export", "--all", "--otlp", endpoint, "--db", ledger_url)
    assert ran.code == 0, ran.err
    spans = [attributes(span) for span in received.spans]
    repeats = [span for span in spans if "thoughtledger.repeats.version" in span]
    assert [
        (span["thoughtledger.event.version"], span["thoughtledger.repeats.version"])
        for span in repeats
    ] == [(4, 2)]
    assert repeats[0]["thoughtledger.repeats.thought_number"] == 1
    roots = {
        span["session.id"]: span.get("thoughtledger.session.repeats")
        for span in spans
        if span["gen_ai.operation.name"] == "invoke_agent"
    }
    assert roots == {"looping": 1, "plain": None}
