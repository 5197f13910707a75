"""The steps right after the quickstart, as a new user takes them, in real processes.

``tools/run`` (the README's quickstart) records the demo; the commands typed next
(``tools/run sessions``, ``show``) find it while no ledger of one's own exists yet, and say so.
The scripts run in a copy of the project whose ``.venv`` holds a ``thoughtledger`` that is
this checkout (the install itself is ``tests/integration/test_tools_env.py``'s subject).
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools_run import fresh_env, tools_project, tools_run

BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or BASH is None, reason="the tools are bash scripts; XDG folders"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's tools whose ``.venv`` is installed: this checkout."""
    return tools_project(tmp_path)


def test_the_commands_after_the_quickstart_find_its_demo(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    demo = tools_run(project, home, terminal=True)
    assert demo.returncode == 0, demo.stderr
    assert "'tools/run sessions'" in demo.stdout
    demo_file = home / ".cache" / "thoughtledger" / "demo.db"
    assert f"Recorded a sample session in {demo_file}" in demo.stdout
    listed = tools_run(project, home, "sessions")
    assert listed.returncode == 0, listed.stderr
    ledger = home / ".local" / "share" / "thoughtledger" / "ledger.db"
    assert listed.stderr == f"(no ledger at {ledger} yet: reading the demo's, {demo_file})\n"
    assert "sre-assistant" in listed.stdout
    prefix = re.search(r"thoughtledger show (\S+) --db", demo.stdout)
    assert prefix is not None, demo.stdout
    shown = tools_run(project, home, "show", prefix.group(1))
    assert shown.returncode == 0, shown.stderr
    assert "9 thoughts, 1 revision, 2 branches" in shown.stdout
    assert not ledger.exists()  # reading the demo made no ledger


def test_once_a_ledger_exists_the_commands_read_it_not_the_demo(
    project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert tools_run(project, home, terminal=True).returncode == 0
    recorded = home / "calls.jsonl"
    recorded.write_text(
        '{"thought": "mine", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": false}\n'
    )
    assert tools_run(project, home, "record", str(recorded)).returncode == 0
    listed = tools_run(project, home, "sessions", "--json")
    assert (listed.returncode, listed.stderr) == (0, "")
    assert "sre-assistant" not in listed.stdout
    assert '"firstThought": "mine"' in listed.stdout


def thoughtledger(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``thoughtledger ARGS`` as the new user runs it, from their home folder."""
    return subprocess.run(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger", *args],
        cwd=home,
        env=fresh_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_doctor_says_which_ledger_the_commands_use_at_each_step(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    ledger = home / ".local" / "share" / "thoughtledger" / "ledger.db"
    demo_file = home / ".cache" / "thoughtledger" / "demo.db"
    first = thoughtledger(home, "doctor")
    assert (first.returncode, first.stderr) == (0, "")
    assert f"ledger    {ledger}\n" in first.stdout
    assert "not made yet: the first thought an agent records makes it" in first.stdout
    assert "serve --http  MCP at http://127.0.0.1:8765/mcp" in first.stdout
    assert not ledger.exists()  # asking made nothing
    assert thoughtledger(home, "demo").returncode == 0
    after_demo = json.loads(thoughtledger(home, "doctor", "--json").stdout)
    assert after_demo["ledger"]["file"] == str(demo_file)
    assert after_demo["ledger"]["chosenBy"] == "the demo's, until there is a ledger of your own"
    assert (after_demo["ledger"]["sessions"], after_demo["ledger"]["events"]) == (1, 10)
    calls = home / "calls.jsonl"
    calls.write_text(
        '{"thought": "mine", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": false}\n'
    )
    assert thoughtledger(home, "record", str(calls)).returncode == 0
    own = json.loads(thoughtledger(home, "doctor", "--json").stdout)["ledger"]
    assert (own["file"], own["sessions"], own["events"]) == (str(ledger), 1, 2)
    assert own["bytes"] > 0
    assert own["schema"] == own["releaseSchema"]
    assert own["schemaNote"].endswith("this release's; nothing to upgrade")
    shown = thoughtledger(home, "doctor")
    assert "chosen by the default file (no --db, no $THOUGHTLEDGER_URL)" in shown.stdout
    assert len(shown.stdout.splitlines()) <= 24  # one screen
    unreachable = thoughtledger(home, "doctor", "--db", "postgresql://auditor@127.0.0.1:1/l")
    assert unreachable.returncode == 1
    assert "cannot be opened: cannot reach postgresql://auditor@127.0.0.1:1/l" in unreachable.stdout
