"""``thoughtledger ui`` and ``export --html`` on the command line: the errors a person can make,
each one line, and nothing created or changed by them."""

import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.support.browser import record_demo
from tests.support.cli import cli, sqlite_url
from tests.support.processes import ROOT, WAIT, child_env
from thoughtledger.adapters.cli.ui import UNGUARDED_WARNING


def test_ui_refuses_a_missing_ledger_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing.db"
    ran = cli(capsys, "ui", "--db", sqlite_url(missing), "--port", "0")
    assert ran.code == 1
    assert ran.err == f"thoughtledger: error: no ledger at {missing}\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["ui", "--host", "0.0.0.0"], "'0.0.0.0' is not one of 127.0.0.1, localhost, ::1"),  # noqa: S104
        (["ui", "--port", "70000"], "expected a port number, 0-65535"),
        (["ui", "--allow-origin", "ftp://host"], "'ftp://host' is not an origin"),
        (["ui", "--allow-origin", "http://host/app"], "only scheme://host[:port], no path"),
        (["ui", "--allow-origin", "http://host:99999"], "'http://host:99999' is not an origin"),
        (
            ["export", "s-1", "--html", "a.html", "-o", "a.jsonl"],
            "give -o FILE or --html FILE.html",
        ),
        (
            ["export", "s-1"],
            "name the file to write with -o FILE (or -o - for standard output), or --format "
            "html -o FILE.html",
        ),
        (["export", "s-1", "--format", "html"], "name the page to write: --format html -o"),
        (["export", "s-1", "--format", "html", "-o", "-"], "--format html -o FILE.html"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = cli(capsys, *argv, "--db", sqlite_url(tmp_path / "l.db"))
    assert ran.code == 2
    assert ran.err.startswith("thoughtledger: error: ")
    assert says in ran.err
    assert ran.err.count("\n") == 1


def test_an_html_export_never_overwrites_without_force_nor_names_an_unknown_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    session_id = record_demo(url)
    target = tmp_path / "page.html"
    target.write_text("mine")
    ran = cli(capsys, "export", session_id, "--format", "html", "-o", str(target), "--db", url)
    assert ran.code == 1
    assert "exists" in ran.err
    assert target.read_text() == "mine"
    ran = cli(capsys, "export", "no-such-session", "--html", str(tmp_path / "b.html"), "--db", url)
    assert ran.code == 2
    assert "no session 'no-such-session'" in ran.err
    assert not (tmp_path / "b.html").exists()
    # The page's former option, --html FILE, is still taken.
    ran = cli(capsys, "export", session_id, "--html", str(target), "--db", url, "--force")
    assert ran.code == 0, ran.err
    assert "exported 10 events of 1 session" in ran.out
    assert 'id="tl-data"' in target.read_text()


def test_ui_serves_until_terminated_then_stops_cleanly_leaving_the_ledger_as_it_was(
    tmp_path: Path,
) -> None:
    db = tmp_path / "l.db"
    url = sqlite_url(db)
    session_id = record_demo(url)
    before = db.read_bytes()
    with subprocess.Popen(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger.adapters.cli", "ui", "--db", url, "--port", "0"],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("thoughtledger ui: http://127.0.0.1:")
        base = line.split()[2]
        for path in ("", f"sessions/{session_id}", f"api/sessions/{session_id}", "api/stats"):
            with urllib.request.urlopen(base + path, timeout=WAIT) as answer:  # noqa: S310
                assert answer.status == 200
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=WAIT)
    assert process.returncode == 0
    assert out == ""
    assert err == f"thoughtledger ui: warning: {UNGUARDED_WARNING}\n"
    assert db.read_bytes() == before


def test_ui_refuses_a_missing_token_file_in_one_line_creating_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    record_demo(url)
    before = sorted(tmp_path.iterdir())
    missing = tmp_path / "tokens.json"
    ran = cli(capsys, "ui", "--db", url, "--port", "0", "--auth", str(missing))
    assert ran.code == 1
    assert ran.err.startswith(f"thoughtledger: error: no token file at {missing}")
    assert ran.err.count("\n") == 1
    assert sorted(tmp_path.iterdir()) == before


def test_an_html_export_of_every_session_holds_each_of_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    first, second = record_demo(url), record_demo(url)
    target = tmp_path / "all.html"
    ran = cli(
        capsys, "export", "--all", "--format", "html", "-o", str(target), "--db", url, "--json"
    )
    assert ran.code == 0, ran.err
    assert ran.json() == {"file": str(target), "sessions": 2, "events": 20}
    page = target.read_text()
    assert page.count(f'"sessionId":"{first}"') == 1
    assert page.count(f'"sessionId":"{second}"') == 1
