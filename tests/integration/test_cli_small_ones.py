"""The small things a person meets on the command line, each in a real process."""

import json
import os
import stat
from pathlib import Path

from tests.support.processes import thoughtledger


def record(db: str, *lines: dict[str, object], agent: str, client: str) -> None:
    calls = "".join(json.dumps(line) + "\n" for line in lines)
    path = Path(db.removeprefix("sqlite:///")).with_suffix(f".{agent}.jsonl")
    path.write_text(calls)
    ran = thoughtledger("record", str(path), "--db", db, "--agent", agent, "--client", client)
    assert ran.returncode == 0, ran.stderr


def call(number: int, total: int, text: str = "", **extra: object) -> dict[str, object]:
    return {
        "thought": text or f"step {number}",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": number < total,
        **extra,
    }


def test_sessions_narrows_by_client_and_by_the_time_started_as_stats_does(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    record(db, call(1, 1), agent="planner", client="cursor")
    record(db, call(1, 1), agent="planner", client="claude-code")
    listed = thoughtledger("sessions", "--client", "cursor", "--db", db, "--json")
    assert [s["client"] for s in json.loads(listed.stdout)] == ["cursor"]
    both = thoughtledger("sessions", "--agent", "planner", "--until", "now", "--db", db, "--json")
    assert len(json.loads(both.stdout)) == 2
    none = thoughtledger("sessions", "--until", "2000-01-01", "--db", db)
    assert (none.returncode, none.stdout) == (0, "no sessions match\n")


def test_stats_counts_in_words_that_agree_with_the_number(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    same = "the same idea said again in the same words"
    record(
        db,
        call(1, 3, same, sessionId="loopy"),
        call(2, 3, same, sessionId="loopy"),
        call(3, 3, "then something new", sessionId="loopy"),
        call(1, 2, sessionId="branchy"),
        call(2, 2, branchFromThought=1, branchId="b", sessionId="branchy"),
        agent="planner",
        client="cli",
    )
    ran = thoughtledger("stats", "--db", db)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert any(line.startswith("fan-out") and "1 branch per session" in line for line in lines)
    assert any("1 thought repeats an earlier one" in line for line in lines)
    assert any(line.split() == ["loopy", "1", "repeat"] for line in lines)
    loops = lines.index(next(line for line in lines if line.startswith("loops")))
    assert lines[loops - 1] == ""  # set apart, as every other block is


def test_keygen_checkpoint_prove_and_token_add_answer_in_json(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    demo = json.loads(thoughtledger("demo", "--db", db, "--json").stdout)["sessionId"]
    key = tmp_path / "log.key"
    made = thoughtledger("keygen", "-o", str(key), "--json")
    assert json.loads(made.stdout) == {
        "privateKey": str(key),
        "publicKey": f"{key}.pub",
        "name": "thoughtledger",
    }
    signed = tmp_path / "cp"
    checkpoint = thoughtledger(
        "checkpoint", "--key", str(key), "-o", str(signed), "--db", db, "--json"
    )
    described = json.loads(checkpoint.stdout)
    assert (described["file"], described["treeSize"]) == (str(signed), 10)
    assert described["root"] == signed.read_text().splitlines()[2]
    bundle = tmp_path / "proof.json"
    proved = thoughtledger(
        "prove", demo, "3", "--checkpoint", str(signed), "-o", str(bundle), "--db", db, "--json"
    )
    assert json.loads(proved.stdout)["file"] == str(bundle)
    tokens = tmp_path / "tokens.json"
    added = thoughtledger("token", "add", "planner", "--file", str(tokens), "--json")
    token = json.loads(added.stdout)
    assert (token["name"], token["role"], token["file"]) == ("planner", "writer", str(tokens))
    assert token["token"] not in tokens.read_text()  # only its hash is kept
    into = tmp_path / "planner.token"
    to_file = thoughtledger(
        "token", "add", "planner", "--file", str(tokens), "-o", str(into), "--json"
    )
    assert json.loads(to_file.stdout)["output"] == str(into)
    assert stat.S_IMODE(os.stat(into).st_mode) == 0o600
