"""Errors and options in the user's words, in real processes: what was typed is what is named."""

import json
from pathlib import Path

from tests.support.processes import thoughtledger


def demo(db: Path) -> str:
    ran = thoughtledger("demo", "--db", str(db), "--json")
    assert ran.returncode == 0, ran.stderr
    session_id: str = json.loads(ran.stdout)["sessionId"]
    return session_id


def test_a_version_past_the_end_is_named_as_the_option_typed(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    session = demo(db)
    for argv, typed in (
        (["show", session[:13], "--at", "99"], "--at 99"),
        (["show", session[:13], "--at", "99", "--limit", "2"], "--at 99"),
        (["diff", session[:13], "1", "99"], "version B (99)"),
    ):
        ran = thoughtledger(*argv, "--db", str(db))
        assert (ran.returncode, ran.stdout) == (2, "")
        assert ran.stderr == (
            f"thoughtledger: error: {typed} is past the end of session {session}: it has 10 "
            "events (versions 1 to 10)\n"
        )
        assert "as_of_version" not in ran.stderr


def test_a_postgresql_url_is_named_as_written(tmp_path: Path) -> None:
    # Nothing listens on port 1: the ledger cannot be reached, and the message names the URL
    # the user typed, not the driver's postgresql+asyncpg:// form, nor its password.
    for typed, named in (
        ("postgresql://auditor@127.0.0.1:1/ledger", "postgresql://auditor@127.0.0.1:1/ledger"),
        (
            "postgres://auditor:s3cret@127.0.0.1:1/ledger",
            "postgres://auditor:***@127.0.0.1:1/ledger",
        ),
    ):
        ran = thoughtledger("sessions", "--db", typed)
        assert ran.returncode == 1
        assert ran.stderr.startswith(f"thoughtledger: error: cannot reach {named}: "), ran.stderr
        assert "asyncpg" not in ran.stderr
        assert "s3cret" not in ran.stderr


def test_the_html_page_is_a_format_like_every_other(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    session = demo(db)
    page = tmp_path / "session.html"
    ran = thoughtledger("export", session, "--format", "html", "-o", str(page), "--db", str(db))
    assert ran.returncode == 0, ran.stderr
    assert page.read_text().startswith("<!doctype html>")
    helped = thoughtledger("export", "--help")
    assert "--html" not in helped.stdout  # the former option is still taken, no longer offered
    assert "html: the sessions as one self-contained web page" in " ".join(helped.stdout.split())


def test_an_unknown_option_points_at_the_commands_own_help() -> None:
    for argv, named in (
        (["replay", "s-1", "--at", "9"], "replay"),
        (["token", "list", "--bogus"], "token list"),
    ):
        ran = thoughtledger(*argv)
        assert (ran.returncode, ran.stdout) == (2, "")
        unknown = " ".join(argv[argv.index(next(a for a in argv if a.startswith("--"))) :])
        assert ran.stderr == (
            f"thoughtledger: error: unrecognized arguments: {unknown} "
            f"(see: thoughtledger {named} --help)\n"
        )
