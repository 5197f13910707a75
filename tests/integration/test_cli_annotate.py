"""``thoughtledger annotate`` end to end: a real process on SQLite and on PostgreSQL."""

import asyncio
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.backends import Backend, pg_url
from tests.support.cli import cli, demo
from tests.support.otlp import attributes, otlp_receiver

DURABLE = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
NOTE = "wrong: the cache hit rate was 99%"


def thoughtledger(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603  # our own command line, arguments of the test's own
        [sys.executable, "-m", "thoughtledger.adapters.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", DURABLE)
def test_annotate_show_stats_and_redact_in_a_real_process(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    if name == "postgres" and pg_url() is None:
        pytest.skip("no PostgreSQL configured (set THOUGHTLEDGER_TEST_PG_URL)")
    backend = Backend(name, tmp_path)
    url = backend.url
    assert url is not None
    try:
        session_id = demo(capsys, url)  # in this process: only annotate's own path is timed
        paged = ("show", session_id, "--limit", "2", "--db", url)  # counted by a page
        thoughts = cli(capsys, *paged, "--json").json()["thoughtHistoryLength"]

        made = thoughtledger(
            "annotate", session_id[:8], "3", "--label", "wrong", "--note", NOTE,
            "--score", "-1", "--by", "reviewer", "--db", url, "--json",
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
        recorded = json.loads(made.stdout)
        assert recorded == {
            "sessionId": session_id,
            "version": 11,
            "thoughtNumber": 3,
            "label": "wrong",
            "score": -1.0,
            "note": NOTE,
            "by": "reviewer",
        }
        plain = thoughtledger("annotate", session_id, "2", "--label", "good", "--db", url)
        assert plain.returncode == 0, plain.stderr
        assert f"annotated thought #2 of session {session_id} as 'good'" in plain.stdout

        shown = thoughtledger("show", session_id, "--db", url)
        assert shown.returncode == 0, shown.stderr
        assert "2 annotations" in shown.stdout
        assert f"✎ #3 wrong (-1) by reviewer: {NOTE}" in shown.stdout
        as_json = cli(capsys, "show", session_id, "--db", url, "--json").json()
        assert [(a["label"], a["thoughtNumber"]) for a in as_json["annotations"]] == [
            ("wrong", 3),
            ("good", 2),
        ]
        # Annotations are not thoughts: a page counts what it did before them.
        assert cli(capsys, *paged, "--json").json()["thoughtHistoryLength"] == thoughts
        assert f" · {thoughts} thoughts" in cli(capsys, *paged).out

        stats = json.loads(thoughtledger("stats", "--db", url, "--json").stdout)
        assert [(s["label"], s["annotations"], s["scoreMean"]) for s in stats["byLabel"]] == [
            ("good", 1, None),
            ("wrong", 1, -1.0),
        ]
        assert "by annotation label" in cli(capsys, "stats", "--db", url).out

        redacted = cli(
            capsys, "redact", session_id, "--version", "11", "--reason", "wrong person", "--db", url
        )
        assert redacted.code == 0, redacted.err
        after = cli(capsys, "show", session_id, "--db", url)
        assert "✎ #3 wrong (-1) by reviewer: [redacted]" in after.out
        assert NOTE not in after.out
        verified = cli(capsys, "verify", "--db", url)
        assert verified.code == 0, verified.out + verified.err
    finally:
        asyncio.run(backend.drop())


@pytest.fixture(scope="module")
def demo_ledger(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A SQLite ledger holding the demo session (shared: the cases below write nothing)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('annotate') / 'ledger.db'}"
    demo = thoughtledger("demo", "--db", url, "--json")
    assert demo.returncode == 0, demo.stderr
    return url, json.loads(demo.stdout)["sessionId"]


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["9", "--label", "x"], 2, "has no thought 9"),
        (["1", "--label", "x", "--note", "\x1b[2Jgone"], 2, "no control characters"),
        (["1", "--label", "x", "--score", "high"], 2, "invalid float value"),
        (["1"], 2, "--label"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_writes_nothing(
    capsys: pytest.CaptureFixture[str],
    demo_ledger: tuple[str, str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    url, session_id = demo_ledger
    ran = thoughtledger("annotate", session_id, *argv, "--db", url)
    assert ran.returncode == code
    assert ran.stdout == ""
    assert len(ran.stderr.strip().splitlines()) == 1
    assert message in ran.stderr
    assert "\x1b" not in ran.stderr
    assert "Traceback" not in ran.stderr
    head = cli(capsys, "show", session_id, "--db", url, "--json").json()
    assert (head["version"], head["annotations"]) == (10, [])


def test_an_unknown_session_is_a_usage_error(demo_ledger: tuple[str, str]) -> None:
    url, _ = demo_ledger
    ran = thoughtledger("annotate", "ffffffff", "1", "--label", "x", "--db", url)
    assert ran.returncode == 2
    assert "ffffffff" in ran.stderr


def test_exports_carry_annotations_as_rows_and_as_span_events(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    session_id = demo(capsys, url)
    for argv in (["3", "--label", "wrong", "--note", NOTE, "--score", "2"], ["1", "--label", "ok"]):
        ran = cli(capsys, "annotate", session_id, *argv, "--by", "rev", "--db", url)
        assert ran.code == 0, ran.err

    table = cli(
        capsys, "export", "--all", "--format", "csv", "--annotations", "-o", "-", "--db", url
    )
    assert table.code == 0, table.err
    rows = list(csv.DictReader(io.StringIO(table.out)))
    assert [(r["thought_number"], r["label"], r["score"], r["note"]) for r in rows] == [
        ("3", "wrong", "2.0", NOTE),
        ("1", "ok", "", ""),
    ]
    assert {r["annotated_by"] for r in rows} == {"rev"}
    assert {r["redacted"] for r in rows} == {"false"}

    # JSON Lines carries them losslessly: imported elsewhere, they verify and show.
    lines = tmp_path / "ledger.jsonl"
    assert cli(capsys, "export", "--all", "-o", str(lines), "--db", url).code == 0
    elsewhere = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    imported = cli(capsys, "import", str(lines), "--db", elsewhere)
    assert imported.code == 0, imported.err
    shown = cli(capsys, "show", session_id, "--db", elsewhere).out
    assert f"✎ #3 wrong (2) by rev: {NOTE}" in shown

    with otlp_receiver() as (endpoint, received):
        sent = cli(capsys, "export", "--all", "--otlp", endpoint, "--db", url)
    assert sent.code == 0, sent.err
    (root,) = [span for span in received.spans if not span.parent_span_id]
    marks = [event for event in root.events if event.name == "thoughtledger.thought.annotated"]
    assert [
        (
            attributes(m)["thoughtledger.annotation.label"],
            attributes(m)["thoughtledger.annotation.thought_number"],
        )
        for m in marks
    ] == [("wrong", 3), ("ok", 1)]
    first = attributes(marks[0])
    assert first["thoughtledger.annotation.score"] == 2.0
    assert first["thoughtledger.annotation.by"] == "rev"
    assert "thoughtledger.annotation.note" not in first  # content is sent only when captured
    thought_3 = next(
        span
        for span in received.spans
        if span.parent_span_id and attributes(span)["thoughtledger.thought_number"] == 3
    )
    assert first["thoughtledger.annotation.span_id"] == thought_3.span_id.hex()
