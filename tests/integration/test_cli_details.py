"""The command line's small promises, each kept: help, refusals that say why, clear names.

A bare ``thoughtledger`` shows where to start; an option that would be ignored is refused; a
taken port, a mistyped token file, a page asked for in another format and a proof checked with
another key are each one clear line; help says what each command does and does not prove.
"""

import asyncio
import os
import socket
from pathlib import Path

import pytest

from tests.support.cli import cli, sqlite_url
from tests.support.processes import thoughtledger
from tests.support.samples import record_sample


def test_a_bare_command_shows_where_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    ran = cli(capsys)
    assert (ran.code, ran.err) == (0, "")
    assert "start here:" in ran.out
    assert "thoughtledger demo" in ran.out


@pytest.mark.parametrize("option", [["--port", "9"], ["--host", "localhost"]])
def test_serve_refuses_http_options_without_http(option: list[str]) -> None:
    done = thoughtledger("serve", *option, "--db", "memory://")
    assert done.returncode == 2
    assert done.stderr == f"thoughtledger: error: {option[0]} applies to --http only " + (
        "(stdio has one client: its parent)\n"
    )


@pytest.mark.parametrize("command", [["ui"], ["serve", "--http"]])
def test_a_taken_port_is_one_clear_line(tmp_path: Path, command: list[str]) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(url))
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = thoughtledger(command[0], *command[1:], "--port", str(port), "--db", url)
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}: " in done.stderr
    assert "unexpected" not in done.stderr
    assert len(done.stderr.splitlines()) == 1 or command[0] == "serve"  # serve logs its start


def test_token_list_of_a_missing_file_is_an_error_not_an_empty_list(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    typo = tmp_path / "typo.json"
    ran = cli(capsys, "token", "list", "--file", str(typo))
    assert ran.code == 1
    assert f"no token file at {typo}" in ran.err
    assert not typo.exists()


def test_export_refuses_a_page_in_another_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(url))
    page = tmp_path / "x.html"
    ran = cli(capsys, "export", "--all", "--format", "csv", "--html", str(page), "--db", url)
    assert ran.code == 2
    assert "--html writes a web page, not csv" in ran.err
    assert not page.exists()


def test_a_proof_checked_with_another_key_names_both_keys_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(url))
    for name in ("signing.key", "other.key"):  # both take the default name, thoughtledger
        assert cli(capsys, "keygen", "-o", str(tmp_path / name)).code == 0
    bundle = tmp_path / "proof.json"
    proved = cli(
        capsys, "prove", "s-a", "1", "--key", str(tmp_path / "signing.key"), "-o", str(bundle),
        "--db", url,
    )  # fmt: skip
    assert proved.code == 0, proved.err
    ran = cli(capsys, "verify-proof", str(bundle), "--pubkey", str(tmp_path / "other.key.pub"))
    assert ran.code == 1
    signing, other = (
        "+".join((tmp_path / f"{name}.key.pub").read_text().split("+")[:2])
        for name in ("signing", "other")
    )
    assert signing != other
    assert f"no signature by the key {other} (it is signed by {signing})" in ran.err


@pytest.mark.parametrize("action", ["list", "revoke"])
def test_token_subcommands_describe_themselves(
    capsys: pytest.CaptureFixture[str], action: str
) -> None:
    ran = cli(capsys, "token", action, "--help")
    description = ran.out.split("\n\n")[1]
    assert ran.code == 0
    assert not description.startswith(("positional arguments", "options"))
    assert len(description.split()) > 10


def test_verify_help_says_what_the_chain_does_not_prove(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = " ".join(cli(capsys, "verify", "--help").out.split())
    assert "not whoever can write to the database" in text
    assert "--checkpoint" in text
    assert "prove nothing was edited" not in " ".join(cli(capsys).out.split())


def test_stats_json_keys_are_camel_case(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(url))
    figures = cli(capsys, "stats", "--json", "--db", url).json()
    assert {"overall", "byAgent", "byDay", "byModel"} <= set(figures)
    assert {"completionRate", "thoughtsP50", "gapP50Seconds"} <= set(figures["overall"])


def test_demos_suggestions_stay_whole_on_a_narrow_terminal(tmp_path: Path) -> None:
    deep = tmp_path / ("a-folder-with-a-long-name-" * 3)
    deep.mkdir()
    db = deep / "demo.db"
    done = thoughtledger("demo", "--db", str(db), FORCE_COLOR="1", COLUMNS="80", TERM="xterm")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "thoughtledger " in line]
    assert len(lines) == 5
    assert all(str(db) in line for line in lines)  # a newline at column 80 would cut it
    assert os.path.exists(db)
