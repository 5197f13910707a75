"""``--read-url`` on the command line and in ``ui``: reads answered by a hot standby (even with
the primary stopped), writes sent to the primary, bad combinations refused in one line."""

import json
from pathlib import Path

import pytest

from tests.support import pg_cluster
from tests.support.processes import thoughtledger
from tests.support.ui_app import record_owned, ui_app

pytestmark = pytest.mark.slow  # each test starts a primary and a standby, then child processes


def seeded(pair: pg_cluster.Pair) -> dict[str, str]:
    """Two sessions recorded on the primary and replayed on the standby; name -> id."""
    made = record_owned(pair.primary.url, {"alpha": None, "beta": None})
    pg_cluster.wait_replayed(pair)
    return made


READING = [
    (["sessions", "--json"], "{alpha}"),
    (["show", "{alpha}", "--json"], "alpha again"),
    (["stats", "--json"], '"sessions": 2,'),
    (["verify", "{alpha}"], "ok: 1 session, 3 events verified"),
    (["search", "thinks", "--json"], "beta thinks"),
    (["replay", "{beta}"], "#2 beta again"),
    (["diff", "{alpha}", "1", "2"], "#1 alpha thinks"),
    (["export", "{alpha}", "-o", "-"], '"session_id":"{alpha}"'),
]
"""Reading commands, each with words its answer must hold."""


def test_the_reading_commands_answer_from_the_standby_with_the_primary_stopped(
    replicated: pg_cluster.Pair,
) -> None:
    made = seeded(replicated)
    pg_cluster.halt(replicated.primary)
    db, standby = replicated.primary.url, replicated.standby.url
    for argv, says in READING:
        filled = [part.format(**made) for part in argv]
        ran = thoughtledger(*filled, "--db", db, "--read-url", standby)
        assert ran.returncode == 0, (filled, ran.stderr)
        assert says.format(**made) in ran.stdout, (filled, ran.stdout)
    # Without the standby, the same commands have nowhere to read.
    alone = thoughtledger("sessions", "--db", db)
    assert alone.returncode == 1
    assert alone.stderr.startswith("thoughtledger: error: cannot")


def test_the_read_url_may_come_from_the_environment(replicated: pg_cluster.Pair) -> None:
    made = seeded(replicated)
    pg_cluster.halt(replicated.primary)
    ran = thoughtledger(
        "sessions",
        "--json",
        "--db",
        replicated.primary.url,
        THOUGHTLEDGER_READ_URL=replicated.standby.url,
    )
    assert ran.returncode == 0, ran.stderr
    assert sorted(made.values()) == sorted(s["sessionId"] for s in json.loads(ran.stdout))


def test_ui_with_a_read_url_serves_its_pages_from_the_standby(
    replicated: pg_cluster.Pair,
) -> None:
    made = seeded(replicated)
    pg_cluster.halt(replicated.primary)
    # A view that only reads (--read-only) starts with its primary down: its pages come from
    # the standby. One that acts writes to the primary, and needs it.
    options = ("--read-url", replicated.standby.url, "--read-only")
    with ui_app(replicated.primary.url, None, *options) as app, app.client() as http:
        assert http.get("/").status_code == 200
        listed = http.get("/api/sessions")
        assert listed.status_code == 200, listed.text
        assert made["alpha"] in listed.text
        assert made["beta"] in listed.text
        session = http.get(f"/api/sessions/{made['alpha']}")
        assert session.status_code == 200, session.text
        assert "alpha thinks" in session.text
        assert http.get(f"/api/sessions/{made['alpha']}/verify").status_code == 200


def test_an_annotation_through_a_read_url_is_written_to_the_primary_and_read_back(
    replicated: pg_cluster.Pair,
) -> None:
    made = seeded(replicated)
    primary = f"{replicated.primary.url}?application_name=reviewer"
    standby = f"{replicated.standby.url}?application_name=reviewer"
    ran = thoughtledger(
        "annotate", made["alpha"], "1", "--label", "sound", "--db", primary, "--read-url", standby
    )
    assert ran.returncode == 0, ran.stderr
    written = pg_cluster.statements(replicated.primary, "reviewer")
    assert any("INSERT INTO tl_events" in line for line in written)
    # Read back at once through the standby, as the next command would.
    shown = thoughtledger("show", made["alpha"], "--json", "--db", primary, "--read-url", standby)
    assert shown.returncode == 0, shown.stderr
    assert "sound" in shown.stdout


def test_a_read_url_for_a_ledger_not_on_postgresql_is_one_line(tmp_path: Path) -> None:
    ledger = tmp_path / "l.db"
    ran = thoughtledger(
        "sessions", "--db", f"sqlite:///{ledger}", "--read-url", "postgresql://u@127.0.0.1:1/x"
    )
    assert ran.returncode == 2
    assert ran.stderr.count("\n") == 1
    assert "needs a PostgreSQL ledger" in ran.stderr
    assert not ledger.exists()


def test_a_standby_that_cannot_be_reached_is_one_line(replicated: pg_cluster.Pair) -> None:
    seeded(replicated)
    pg_cluster.halt(replicated.standby)
    ran = thoughtledger(
        "sessions", "--db", replicated.primary.url, "--read-url", replicated.standby.url
    )
    assert ran.returncode == 1
    assert ran.stderr.count("\n") == 1
    assert f"127.0.0.1:{replicated.standby.port}" in ran.stderr
