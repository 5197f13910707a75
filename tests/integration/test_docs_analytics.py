"""The analytics page's three analyses of the demo ledger run as written: the SQL, the pandas and
the chart (``docs/analytics.md``: its one ```` ```sql ```` block and two ```` ```py ```` blocks).

Each is checked against the log itself (the ``tl_events`` rows) or the ``stats`` command, never
against the views it reads. The chart the test draws is left in ``build/readme/`` (git-ignored);
``docs/demo-thinking.png``, shown on that page, is a copy of it.
"""

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


def test_the_analytics_page_shows_three_analyses_and_the_chart() -> None:
    assert len(blocks("sql")) == 1
    assert len(blocks("py")) == 2
    assert SHOWN in [(ANALYTICS.parent / target).resolve() for target in links(ANALYTICS)]


def test_the_sql_analysis_gives_the_revision_rate_stats_reports(
    capsys: pytest.CaptureFixture[str], demo_db: Path
) -> None:
    (query,) = blocks("sql")
    with sqlite3.connect(demo_db) as connection:
        rows = connection.execute(query).fetchall()
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
