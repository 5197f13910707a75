"""tools/run and tools/test share .venv: what each installs, and a failed install is not recorded.

The real scripts run in a copy of the project, with a stand-in for Python (and so for pip) that
records what it is asked and fails on demand: seconds, not a real install.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRST_RUN = "installing thoughtledger into .venv (first run only)..."
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or BASH is None, reason="the tools are bash scripts"
)

FAKE_PYTHON = """#!/bin/sh
# Stands in for python3 and for .venv/bin/python: records each call; installing the project
# fails while $PROJECT/pip-fails exists, else "installs" a thoughtledger echoing its arguments.
echo "$*" >> "$PROJECT/calls"
case "$1 $2" in
    "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
    "-m pip")
        echo "  a build backend's banner" >&2
        case " $* " in *" -e "*) ;; *) exit 0 ;; esac  # pip upgrading itself
        if [ -e "$PROJECT/pip-fails" ]; then
            echo "ERROR: No matching distribution found for mcp>=2.3,<3" >&2
            exit 1
        fi
        printf '#!/bin/sh\\necho "thoughtledger ran: $*"\\n' > "$PROJECT/.venv/bin/thoughtledger"
        chmod +x "$PROJECT/.venv/bin/thoughtledger" ;;
esac
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    for name in ("tools/_env.sh", "tools/run", "pyproject.toml"):
        shutil.copy2(ROOT / name, project / name)
    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return project


def run(project: Path, *script: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "PYTHON": str(project.parent / "python3"),
        "PROJECT": str(project),
    }
    return subprocess.run(  # noqa: S603  # the project's own scripts
        [str(BASH), *script],
        cwd=cwd or project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def pip_calls(project: Path) -> list[str]:
    calls = project / "calls"
    lines = calls.read_text().splitlines() if calls.exists() else []
    return [line for line in lines if line.startswith("-m pip install") and "-e" in line.split()]


def stamp(project: Path) -> str | None:
    path = project / ".venv" / ".thoughtledger-installed"
    return path.read_text().strip() if path.exists() else None


def pyproject_hash(project: Path) -> str:
    return hashlib.sha256((project / "pyproject.toml").read_bytes()).hexdigest()


def test_a_failed_install_says_so_records_nothing_and_is_tried_again(project: Path) -> None:
    (project / "pip-fails").touch()
    failed = run(project, "tools/run", "--version")
    assert failed.returncode == 1
    assert failed.stdout == ""  # stdout is an MCP client's channel
    lines = failed.stderr.splitlines()
    assert lines[0] == FIRST_RUN
    assert "ERROR: No matching distribution found for mcp>=2.3,<3" in lines
    assert lines[-1].startswith("tools/run: error: installing thoughtledger into .venv failed")
    assert stamp(project) is None

    (project / "pip-fails").unlink()
    fixed = run(project, "tools/run", "--version")
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == "thoughtledger ran: --version\n"
    assert fixed.stderr == FIRST_RUN + "\n"  # pip's and the build backend's output stay hidden
    assert stamp(project) == f"core {pyproject_hash(project)}"

    installs = pip_calls(project)
    again = run(project, "tools/run", "--version")
    assert (again.returncode, again.stderr) == (0, "")
    assert pip_calls(project) == installs


def test_tools_run_installs_what_running_needs_and_tools_test_adds_the_dev_tools(
    project: Path,
) -> None:
    assert run(project, "tools/run", "sessions").returncode == 0
    assert pip_calls(project)[-1].split()[-2:] == ["-e", "."]

    # What tools/test does before linting: the same .venv, with the dev extras.
    dev = run(project, "-c", "VENV_EXTRAS=dev; source tools/_env.sh")
    assert dev.returncode == 0, dev.stderr
    assert dev.stderr == "adding the development tools to .venv (once)...\n"
    assert pip_calls(project)[-1].split()[-2:] == ["-e", ".[dev]"]
    assert stamp(project) == f"dev {pyproject_hash(project)}"

    # A dev install holds what running needs: tools/run installs nothing more.
    installs = pip_calls(project)
    assert run(project, "tools/run", "sessions").returncode == 0
    assert pip_calls(project) == installs

    with (project / "pyproject.toml").open("a") as pyproject:
        pyproject.write("# changed\n")
    changed = run(project, "tools/run", "sessions")
    assert changed.stderr == "updating .venv: pyproject.toml changed...\n"
    assert pip_calls(project)[-1].split()[-2:] == ["-e", "."]
    assert stamp(project) == f"core {pyproject_hash(project)}"


def test_run_from_another_folder_reads_relative_paths_from_that_folder(
    project: Path, tmp_path: Path
) -> None:
    assert run(project, "tools/run", "--version").returncode == 0  # installed
    (project / ".venv" / "bin" / "thoughtledger").write_text('#!/bin/sh\necho "in $PWD: $*"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = run(project, str(project / "tools" / "run"), "show", "--db", "demo.db", cwd=elsewhere)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == f"in {elsewhere}: show --db demo.db\n"
