"""The analytics page's three analyses of the demo ledger run as written: the SQL, the pandas and
the chart (``docs/analytics.md``: its ```` ```sql ```` blocks and two ```` ```py ```` blocks), and
its query of what captured reasoning led to, over a ledger the capture path wrote.

Each is checked against the log itself (the ``tl_events`` rows) or the ``stats`` command, never
against the views it reads. The chart the test draws is left in ``build/readme/`` (git-ignored);
``docs/demo-thinking.png``, shown on that page, is a copy of it.
"""

import asyncio
import shutil
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import numpy
import pytest
from matplotlib import pyplot
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tests.support.cli import cli, demo, sqlite_url
from tests.support.docs import ROOT, fenced_blocks, links, page
from thoughtledger import open_ledger
from thoughtledger.api import CapturedAction, CapturedReasoning, CapturedSpan

ANALYTICS = page("analytics.md")
DRAWN = ROOT / "build" / "readme" / "demo-thinking.png"
SHOWN = ROOT / "docs" / "demo-thinking.png"


def blocks(language: str) -> list[str]:
    """The ``language`` code blocks of the analytics page."""
    return fenced_blocks(ANALYTICS, language)


def logged(db: Path, field: str) -> list[Any]:
    """``field`` of each event's payload after the session's start, in log order."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            f"SELECT {field} FROM tl_events"  # noqa: S608  # the test's own constant fields
            " WHERE event_type != 'session.started' ORDER BY position"
        )
        return [value for (value,) in rows]


def thought_kinds(db: Path) -> Counter[str]:
    """How many events of each thought kind the log holds (every event but the session's start)."""
    return Counter(logged(db, "event_type"))


@pytest.fixture
def demo_db(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A fresh demo ledger, ``demo.db`` in the working folder, as the page makes it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")  # draw to files, never to a window
    demo(capsys, sqlite_url(tmp_path / "demo.db"))
    return tmp_path / "demo.db"


def run(block: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(block, "docs/analytics.md block", "exec"), namespace)  # noqa: S102  # the documented example is the test
    return namespace


def sql(naming: str) -> str:
    """The page's one SQL block that names ``naming``."""
    (query,) = [block for block in blocks("sql") if naming in block]
    return query


def test_the_analytics_page_shows_three_analyses_and_the_chart() -> None:
    assert len(blocks("sql")) == 2  # the revision rate; what captured reasoning led to
    assert len(blocks("py")) == 2
    assert SHOWN in [(ANALYTICS.parent / target).resolve() for target in links(ANALYTICS)]


def test_the_sql_analysis_gives_the_revision_rate_stats_reports(
    capsys: pytest.CaptureFixture[str], demo_db: Path
) -> None:
    with sqlite3.connect(demo_db) as connection:
        rows = connection.execute(sql("revision_rate")).fetchall()
    figures = cli(capsys, "stats", "--db", sqlite_url(demo_db), "--json").json()
    expected = [(item["agent"], item["revisionRate"]) for item in figures["byAgent"]]
    assert [(agent, round(rate, 4)) for agent, rate in rows] == expected
    assert rows[0][1] > 0  # the demo revises a thought


def test_the_pandas_analysis_prints_each_kind_of_thought_as_a_script(
    demo_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    run(blocks("py")[0])
    # As a script prints it: pandas' Series lines "kind  count", between a header and a dtype.
    printed = capsys.readouterr().out.splitlines()
    counts = {
        words[0]: int(words[1])
        for words in (line.split() for line in printed)
        if len(words) == 2 and words[1].isdigit()
    }
    assert counts == thought_kinds(demo_db)
    assert len(counts) >= 3  # recorded, revised and branch thoughts


def test_the_chart_plots_every_thought_against_the_estimate(demo_db: Path) -> None:
    namespace = run(blocks("py")[1])
    figure: Figure = namespace["fig"]
    axes: Axes = namespace["ax"]
    try:
        plotted = Counter(
            {
                str(points.get_label()): len(numpy.asarray(points.get_offsets()))
                for points in axes.collections
            }
        )
        assert plotted == thought_kinds(demo_db)
        (line,) = axes.get_lines()
        estimates = logged(demo_db, "json_extract(payload, '$.total_thoughts')")
        assert numpy.asarray(line.get_ydata()).tolist() == estimates
        with sqlite3.connect(demo_db) as connection:
            (agent,) = connection.execute(
                "SELECT json_extract(payload, '$.metadata.agent') FROM tl_events"
                " WHERE event_type = 'session.started'"
            ).fetchone()
        assert axes.get_title().startswith(f"{agent}: {len(estimates)} thoughts, estimate ")
    finally:
        pyplot.close(figure)
    picture = Path("thinking.png").read_bytes()
    assert picture.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(picture) < 100_000
    DRAWN.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile("thinking.png", DRAWN)


def test_the_actions_query_gives_each_action_beside_the_reasoning_before_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "captured.db"
    span = CapturedSpan(
        trace_id="ab" * 16,
        span_id="cd" * 8,
        dialect="gen_ai",
        conversation="fixing",
        parts=(
            CapturedReasoning("The cache misses on every cold start; read its key."),
            CapturedAction("read_file", "call_1", '{"path": "cache.py"}'),
            CapturedAction("grep", "call_2", '{"q": "key"}'),
            CapturedReasoning("The key holds the time: that is the miss."),
            CapturedAction("edit_file", "call_3", '{"path": "cache.py"}'),
        ),
    )

    async def capture() -> None:
        async with open_ledger(sqlite_url(db)) as ledger:
            await ledger.as_principal(None).capture([span])

    asyncio.run(capture())
    with sqlite3.connect(db) as connection:
        rows = connection.execute(sql("tl_actions")).fetchall()
    connection.close()
    # From the spans themselves: each call, after the reasoning part before it.
    expected: list[tuple[int, str, str, str]] = []
    thoughts = 0
    reasoning = ""
    for part in span.parts:
        if isinstance(part, CapturedReasoning):
            thoughts, reasoning = thoughts + 1, part.text
        else:
            expected.append((thoughts, reasoning, part.name, part.arguments))
    assert rows == expected
