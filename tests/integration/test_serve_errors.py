"""``serve`` fails like every other command, and keeps credentials out of what it prints.

Failures are one line, ``thoughtledger: error: ...``, exit 2 for a ledger URL of no known form
and 1 for a ledger that cannot be opened. Passwords in the ledger URL (``user:pw@`` or
``?password=``) and HTTP session ids (the only credential of a session) appear nowhere on stderr.
"""

import http.client
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.lines import initialize
from tests.support.processes import ROOT, WAIT, child_env, thoughtledger

SECRETS = ("pw-in-userinfo", "pw-in-query", "ssl-pw-in-query")


def test_a_ledger_url_of_no_known_form_is_refused_as_every_command_refuses_it() -> None:
    served = thoughtledger("serve", "--db", "nosuch://ledger")
    listed = thoughtledger("sessions", "--db", "nosuch://ledger")
    assert served.returncode == listed.returncode == 2
    assert served.stderr == listed.stderr
    assert re.fullmatch(
        r"thoughtledger: error: unknown ledger URL 'nosuch://ledger'.*\n", served.stderr
    )
    assert served.stdout == ""


def test_a_ledger_that_cannot_be_opened_is_one_line_and_exit_1_without_its_passwords() -> None:
    url = f"postgresql://agent:{SECRETS[0]}@127.0.0.1:1/none?password={SECRETS[1]}"
    served = thoughtledger("serve", "--db", url)
    assert served.returncode == 1
    assert re.fullmatch(r"thoughtledger: error: cannot reach \S+: .*\n", served.stderr)
    assert not [secret for secret in SECRETS if secret in served.stderr + served.stdout]


@contextmanager
def serving(db: str, log: Path, *options: str) -> Iterator[subprocess.Popen[bytes]]:
    """``serve`` with stderr in ``log``; the block stops it, and it must end cleanly (exit 0)."""
    with log.open("wb") as stderr:
        process = subprocess.Popen(  # noqa: S603  # our interpreter, our module
            [sys.executable, "-m", "thoughtledger.adapters.cli", "serve", "--db", db, *options],
            cwd=ROOT,
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            yield process
            assert process.wait(WAIT) == 0, log.read_text(encoding="utf-8")
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(WAIT)
            assert process.stdin is not None
            process.stdin.close()


def stop(process: subprocess.Popen[bytes], transport: str) -> None:
    """Stop a server as its host would: close stdin (stdio), or SIGTERM (HTTP)."""
    assert process.stdin is not None
    if transport == "stdio":
        process.stdin.close()
    else:
        process.send_signal(signal.SIGTERM)


def logged(log: Path, pattern: str) -> re.Match[str]:
    deadline = time.monotonic() + WAIT
    while (found := re.search(pattern, log.read_text(encoding="utf-8"))) is None:
        assert time.monotonic() < deadline, f"{pattern!r} never logged:\n{log.read_text()}"
        time.sleep(0.05)
    return found


def with_secrets(url: str) -> str:
    """``url`` carrying passwords (a trusting PostgreSQL server ignores the ones it is given)."""
    if url.startswith("sqlite"):
        return f"{url}?password={SECRETS[1]}&sslpassword={SECRETS[2]}"
    return url.replace("postgres@", f"postgres:{SECRETS[0]}@", 1) + f"&password={SECRETS[1]}"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_serving_line_names_the_ledger_without_its_passwords(
    tmp_path: Path, transport: str, ledger_url: str
) -> None:
    log = tmp_path / f"{transport}.err"
    options = ["--http", "--port", "0"] if transport == "http" else []
    with serving(with_secrets(ledger_url), log, *options) as process:
        line = logged(log, rf"serving_{transport} .*").group()
        stop(process, transport)
    stderr = log.read_text(encoding="utf-8")
    assert "password=***" in line
    assert not [secret for secret in SECRETS if secret in stderr], stderr


def test_http_session_ids_never_reach_the_log(tmp_path: Path) -> None:
    log = tmp_path / "http.err"
    with serving(f"sqlite:///{tmp_path / 'l.db'}", log, "--http", "--port", "0") as process:
        port = int(logged(log, r"url=http://127\.0\.0\.1:(\d+)/mcp").group(1))
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        opening = initialize("log-reader")
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        connection.request("POST", "/mcp", json.dumps(opening), headers)
        answer = connection.getresponse()
        answer.read()
        session_id = answer.getheader("mcp-session-id")
        assert session_id
        # Ending the session is logged too (by the SDK, naming it).
        connection.request("DELETE", "/mcp", headers={"mcp-session-id": session_id})
        connection.getresponse().read()
        logged(log, r"Terminating session: session#[0-9a-f]{8}")
        connection.close()
        stop(process, "http")
    stderr = log.read_text(encoding="utf-8")
    assert session_id not in stderr
    assert re.search(r"session ID: session#[0-9a-f]{8}", stderr)  # still followed, by fingerprint
