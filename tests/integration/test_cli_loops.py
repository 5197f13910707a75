"""Loops through the command line in a real process: ``show`` marks a repeat, ``stats`` counts it.

The session is recorded through the Python API into an SQLite file or a PostgreSQL schema, then
read by ``thoughtledger`` in a child process, as a person would.
"""

import asyncio
import json

import pytest

from tests.support.cli import cli
from tests.support.otlp import attributes, otlp_receiver
from tests.support.processes import thoughtledger
from thoughtledger.api import open_ledger

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
    skipped = thoughtledger("stats", "--json", "--db", ledger_url)
    assert json.loads(skipped.stdout)["loops"] is None
    coder = thoughtledger("stats", "--loops", "--agent", "coder", "--json", "--db", ledger_url)
    assert json.loads(coder.stdout)["loops"]["sessionsWithLoops"] == 0

    table = thoughtledger("stats", "--loops", "--db", ledger_url)
    assert table.returncode == 0, table.stderr
    assert "sessions with loops" in table.stdout
    assert "looping" in table.stdout


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
