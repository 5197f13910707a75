"""``verify`` through ``main``: clean chains pass, and any tampering is named and fails."""

import asyncio
import sqlite3
import uuid
from pathlib import Path

import pytest

from tests.support.cli import cli, demo, sqlite_url
from tests.support.processes import thoughtledger
from tests.support.samples import record_sample


def tamper(path: Path, statement: str) -> None:
    """Edit the database behind the ledger's back, as an attacker with file access would."""
    db = sqlite3.connect(path)
    try:
        db.execute(statement)
        db.commit()
    finally:
        db.close()


def event_id(path: Path, session_id: str, version: int) -> str:
    db = sqlite3.connect(path)
    try:
        row = db.execute(
            "SELECT event_id FROM tl_events WHERE session_id = ? AND version = ?",
            (session_id, version),
        ).fetchone()
    finally:
        db.close()
    return str(uuid.UUID(bytes=row[0]))  # kept as its 16 bytes (schema step 18)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """The SQLite file of a ledger holding the sample sessions."""
    path = tmp_path / "l.db"
    asyncio.run(record_sample(sqlite_url(path)))
    return path


def test_an_untouched_ledger_verifies(capsys: pytest.CaptureFixture[str], sample: Path) -> None:
    url = sqlite_url(sample)
    ran = cli(capsys, "verify", "--db", url)
    assert (ran.code, ran.err) == (0, "")
    assert ran.out == "ok: 5 sessions, 21 events verified; every chain verifies\n"
    one = cli(capsys, "verify", "s-b", "--db", url, "--json")
    assert one.json() == {"ok": True, "sessions": 1, "eventsVerified": 5, "broken": []}


def test_an_edited_payload_fails_verify_and_names_the_event(
    capsys: pytest.CaptureFixture[str], sample: Path
) -> None:
    path = sample
    tamper(
        path,
        "UPDATE tl_events SET payload = replace(payload, 'thought 2', 'thought two') "
        "WHERE session_id = 's-d' AND version = 3",
    )
    bad = event_id(path, "s-d", 3)
    ran = cli(capsys, "verify", "--all", "--db", sqlite_url(path))
    assert ran.code == 1
    assert f"BROKEN session s-d: version 3, event {bad}, position " in ran.out
    assert ran.err.startswith(
        f"thoughtledger: error: tampering detected: session s-d: version 3, event {bad}"
    )
    # The text is covered through its digest (payload schema 2): the digest names the edit.
    assert ran.err.endswith("content does not match its digest\n")
    report = cli(capsys, "verify", "s-d", "--db", sqlite_url(path), "--json").json()
    assert report["ok"] is False
    assert report["broken"][0] | {"position": None} == {
        "sessionId": "s-d",
        "version": 3,
        "eventId": bad,
        "position": None,
        "reason": "content does not match its digest",
    }


def test_a_deleted_event_fails_verify_and_names_the_missing_version(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "l.db"
    session_id = demo(capsys, sqlite_url(path))
    tamper(path, "DELETE FROM tl_events WHERE version = 4")
    ran = cli(capsys, "verify", session_id, "--db", sqlite_url(path))
    assert ran.code == 1
    assert f"session {session_id}: version 4: version 4 is missing" in ran.err


def test_every_broken_session_is_listed_and_the_others_still_verify(
    capsys: pytest.CaptureFixture[str], sample: Path
) -> None:
    path = sample
    tamper(
        path,
        "UPDATE tl_events SET recorded_at = '2030-01-01T00:00:00.000000Z' "
        "WHERE version = 2 AND session_id IN ('s-a', 's-e')",
    )
    ran = cli(capsys, "verify", "--db", sqlite_url(path), "--json")
    assert ran.code == 1
    data = ran.json()
    assert [item["sessionId"] for item in data["broken"]] == ["s-a", "s-e"]
    assert data["sessions"] == 5
    assert "(and 1 more session)" in ran.err


def test_show_warns_before_a_session_whose_chain_does_not_verify(sample: Path) -> None:
    url = sqlite_url(sample)
    clean = thoughtledger("show", "s-d", "--db", url)
    assert (clean.returncode, clean.stderr) == (0, "")
    tamper(
        sample,
        "UPDATE tl_events SET payload = replace(payload, 'thought 2', 'thought two') "
        "WHERE session_id = 's-d' AND version = 3",
    )
    shown = thoughtledger("show", "s-d", "--db", url)
    assert shown.returncode == 0
    assert "thought two" in shown.stdout  # shown, as it is: but not without a word
    assert shown.stderr.startswith(
        "thoughtledger: warning: this session's chain does not verify, so what follows may "
        "have been edited: session s-d: version 3, event "
    )
    assert shown.stderr.count("\n") == 1
