"""``thoughtledger token add|list|revoke``: tokens shown once, only their hashes kept, privately.

``add`` prints the token alone on stdout (and how to use it on stderr); the file is 0600 in a
folder made 0700, and holds no token; ``list`` shows no secret and, like every reading command,
creates nothing; bad input is one line and changes nothing.
"""

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import Ran, cli
from tests.support.processes import ROOT, WAIT, child_env
from thoughtledger.adapters.auth.tokens import default_token_path, load_tokens


def _add(capsys: pytest.CaptureFixture[str], path: Path, name: str, *options: str) -> Ran:
    ran = cli(capsys, "token", "add", name, "--file", str(path), *options)
    assert ran.code == 0, ran.err
    return ran


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_add_prints_the_token_once_and_the_file_keeps_only_its_hash_privately(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "new" / "deeper" / "tokens.json"
    ran = _add(capsys, path, "alice")
    token = ran.out.strip()
    assert ran.out == token + "\n"  # nothing else on stdout: $(thoughtledger token add) works
    assert token.startswith("tl_")
    assert len(token) == 3 + 43  # 32 random bytes, URL-safe base64 without padding
    assert "Authorization: Bearer" in ran.err
    assert f"--auth {path}" in ran.err
    assert token not in ran.err
    text = path.read_text()
    assert token not in text
    assert hashlib.sha256(token.encode()).hexdigest() in text
    assert _mode(path) == 0o600
    assert _mode(path.parent) == _mode(path.parent.parent) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["tokens.json"]  # no temporary left


def test_a_principal_may_hold_several_tokens_each_different(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    writer = _add(capsys, path, "alice").out
    reader = _add(capsys, path, "alice", "--role", "reader").out
    auditor = _add(capsys, path, "carol", "--role", "auditor").out
    assert len({writer, reader, auditor}) == 3
    rows = cli(capsys, "token", "list", "--json", "--file", str(path)).json()
    assert [(row["name"], row["role"]) for row in rows] == [
        ("alice", "writer"),
        ("alice", "reader"),
        ("carol", "auditor"),
    ]
    assert len({row["id"] for row in rows}) == 3
    assert _mode(path) == 0o600  # still private after being rewritten


def test_list_shows_names_roles_ids_and_times_but_no_secret(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    token = _add(capsys, path, "alice").out.strip()
    digest = hashlib.sha256(token.encode()).hexdigest()
    table = cli(capsys, "token", "list", "--file", str(path))
    as_json = cli(capsys, "token", "list", "--json", "--file", str(path))
    for ran in (table, as_json):
        assert ran.code == 0
        assert token not in ran.out + ran.err
        assert digest not in ran.out + ran.err
    assert set(as_json.json()[0]) == {"id", "name", "role", "created"}
    assert table.out.split("\n")[0].split() == ["name", "role", "id", "created"]
    assert "alice" in table.out
    assert as_json.json()[0]["id"] in table.out


def test_reading_commands_create_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "absent" / "tokens.json"
    # The default file, not made yet, holds no tokens ($XDG_DATA_HOME is under tmp_path) ...
    listed = cli(capsys, "token", "list")
    as_json = cli(capsys, "token", "list", "--json")
    # ... while a file named by hand and missing is a typo to report, not an empty list.
    named = cli(capsys, "token", "list", "--file", str(missing))
    revoked = cli(capsys, "token", "revoke", "alice", "--file", str(missing))
    assert (listed.code, as_json.code) == (0, 0)
    assert "no tokens" in listed.out
    assert as_json.json() == []
    assert (named.code, revoked.code) == (1, 1)
    assert named.err.startswith("thoughtledger: error: no token file at ")
    assert revoked.err.startswith("thoughtledger: error: no token file at ")
    assert list(tmp_path.iterdir()) == []


def test_revoke_ends_all_of_a_principals_tokens_or_one_by_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    for role in ("writer", "reader", "writer"):
        _add(capsys, path, "alice", "--role", role)
    _add(capsys, path, "bob")
    rows = cli(capsys, "token", "list", "--json", "--file", str(path)).json()
    reader = next(row["id"] for row in rows if row["role"] == "reader")
    one = cli(capsys, "token", "revoke", "alice", "--id", reader, "--file", str(path))
    assert (one.code, one.out) == (0, "")
    assert "revoked 1 token of alice" in one.err
    left = cli(capsys, "token", "list", "--json", "--file", str(path)).json()
    assert sorted((row["name"], row["role"]) for row in left) == [
        ("alice", "writer"),
        ("alice", "writer"),
        ("bob", "writer"),
    ]
    every = cli(capsys, "token", "revoke", "alice", "--file", str(path))
    assert "revoked 2 tokens of alice" in every.err
    rest = cli(capsys, "token", "list", "--json", "--file", str(path)).json()
    assert [row["name"] for row in rest] == ["bob"]


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["add", "bad name"], 2, "invalid principal name 'bad name'"),
        (["add"], 2, "the following arguments are required: NAME"),
        (["add", "alice", "--role", "admin"], 2, "invalid choice: 'admin'"),
        (["revoke", "nobody"], 2, "no token of 'nobody' in the token file"),
        (["revoke", "alice", "--id", "ffffffff"], 2, "no token 'ffffffff' of 'alice'"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], code: int, message: str
) -> None:
    path = tmp_path / "tokens.json"
    _add(capsys, path, "alice")
    before = path.read_bytes()
    ran = cli(capsys, "token", *argv, "--file", str(path))
    assert ran.code == code
    assert ran.out == ""
    assert ran.err.startswith("thoughtledger: error: ")
    assert ran.err.count("\n") == 1
    assert message in ran.err
    assert path.read_bytes() == before


def test_a_bad_name_creates_no_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ran = cli(capsys, "token", "add", "bad/name", "--file", str(tmp_path / "new" / "t.json"))
    assert ran.code == 2
    assert "invalid principal name 'bad/name'" in ran.err
    assert list(tmp_path.iterdir()) == []


def test_tokens_added_at_the_same_time_are_all_kept(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    adders = [
        subprocess.Popen(  # noqa: S603  # our interpreter, our module
            [
                sys.executable,
                "-m",
                "thoughtledger.adapters.cli",
                "token",
                "add",
                f"agent{n}",
                "--file",
                str(path),
            ],
            cwd=ROOT,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for n in range(6)
    ]
    tokens = [adder.communicate(timeout=WAIT)[0].strip() for adder in adders]
    assert [adder.returncode for adder in adders] == [0] * 6
    kept = load_tokens(path)
    assert sorted(record.name for record in kept.records) == [f"agent{n}" for n in range(6)]
    assert all(kept.find(token) is not None for token in tokens)


def test_a_corrupt_token_file_is_one_line_and_left_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text('{"version": 1, "tokens": [{"id": "x"}]}')
    for argv in (["list"], ["add", "alice"], ["revoke", "alice"]):
        ran = cli(capsys, "token", *argv, "--file", str(path))
        assert ran.code == 1
        assert ran.err.startswith(f"thoughtledger: error: {path} is not a thoughtledger token")
        assert ran.err.count("\n") == 1
    assert json.loads(path.read_text()) == {"version": 1, "tokens": [{"id": "x"}]}


def test_the_default_file_sits_beside_the_default_ledger(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    listed = cli(capsys, "token", "list")
    assert listed.code == 0
    assert list(tmp_path.iterdir()) == []
    assert cli(capsys, "token", "add", "alice").code == 0
    assert default_token_path() == tmp_path / "thoughtledger" / "tokens.json"
    assert default_token_path().exists()
    assert _mode(default_token_path().parent) == 0o700


def test_add_o_writes_the_token_for_its_owner_alone_and_keeps_an_existing_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "planner.token"
    path = tmp_path / "tokens.json"
    ran = _add(capsys, path, "planner", "-o", str(target))
    kept = target.read_text()
    again = cli(capsys, "token", "add", "planner", "--file", str(path), "-o", str(target))
    unchanged = target.read_text()
    forced = _add(capsys, path, "planner", "-o", str(target), "--force")
    assert ran.out == ""  # the token is in the file, not on the terminal
    assert kept.startswith("tl_")
    assert kept == kept.strip() + "\n"
    assert kept.strip() not in ran.err
    assert f"the token is in {target}, readable by you alone" in ran.err
    assert (again.code, again.out) == (1, "")
    assert again.err == f"thoughtledger: error: {target} exists; --force to overwrite\n"
    assert unchanged == kept
    assert forced.code == 0
    assert target.read_text() != kept
    assert _mode(target) == 0o600
    rows = cli(capsys, "token", "list", "--json", "--file", str(path)).json()
    assert len(rows) == 2  # the refused add left no token behind
    assert load_tokens(path).find(target.read_text().strip()) is not None
    assert load_tokens(path).find(kept.strip()) is not None


def test_add_o_is_0600_whatever_the_umask(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "planner.token"
    previous = os.umask(0)  # the most permissive: a plain open() would make it 0666
    try:
        _add(capsys, tmp_path / "tokens.json", "planner", "-o", str(target))
    finally:
        os.umask(previous)
    assert _mode(target) == 0o600


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--force"], "--force goes with -o FILE"),
        (["-o", "{tmp}"], "is a directory; name a file, such as"),
        (["-o", "{tmp}/missing/planner.token"], "is not a directory"),
    ],
)
def test_add_o_mistakes_are_one_line_and_make_no_token(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    path = tmp_path / "tokens.json"
    given = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    ran = cli(capsys, "token", "add", "planner", "--file", str(path), *given)
    assert ran.code == 2
    assert ran.out == ""
    assert ran.err.startswith("thoughtledger: error: ")
    assert ran.err.count("\n") == 1
    assert message in ran.err
    assert not path.exists()
