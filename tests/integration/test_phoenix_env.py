"""tools/phoenix_env: installs the pinned Phoenix once, says where, and records no failed install.

The real script runs in a copy of the project, with stand-ins for Python, pip and uv that record
what they are asked and fail on demand: seconds, not the real 600 MB.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or BASH is None, reason="the tools are bash scripts"
)

FAKE_PYTHON = """#!/bin/sh
# Stands in for python3 and the new environment's python: `-m venv DIR` makes DIR/bin/python,
# `-m pip install uv...` puts a uv there that installs a phoenix, or fails while
# $PROJECT/uv-fails exists.
echo "python $*" >> "$PROJECT/calls"
case "$1 $2" in
    "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
    "-m pip")
        bin="$(dirname "$0")"
        cat > "$bin/uv" <<EOF
#!/bin/sh
echo "uv \\$*" >> "$PROJECT/calls"
if [ -e "$PROJECT/uv-fails" ]; then echo "error: no solution for arize-phoenix" >&2; exit 1; fi
printf '#!/bin/sh\\n' > "$bin/phoenix" && chmod +x "$bin/phoenix"
EOF
        chmod +x "$bin/uv" ;;
esac
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    for name in ("tools/phoenix_env", "tools/phoenix-requirements.txt"):
        shutil.copy2(ROOT / name, project / name)
    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return project


def run(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "PYTHON": str(project.parent / "python3"),
        "PROJECT": str(project),
    }
    return subprocess.run(  # noqa: S603  # the project's own script
        [str(BASH), "tools/phoenix_env", *arguments],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def calls(project: Path) -> list[str]:
    path = project / "calls"
    return path.read_text().splitlines() if path.exists() else []


def test_phoenix_is_installed_once_from_the_pinned_requirements(project: Path) -> None:
    executable = f"{project}/.venv-phoenix/bin/phoenix"
    assert run(project, "--installed").returncode == 1  # asks, installs nothing
    assert calls(project) == []

    first = run(project)
    assert (first.returncode, first.stdout, first.stderr) == (0, executable + "\n", "")
    uv = [line for line in calls(project) if line.startswith("uv ")]
    assert uv == [
        "uv pip install --python .venv-phoenix/bin/python --compile-bytecode"
        " -r tools/phoenix-requirements.txt"
    ]
    requirements = (project / "tools/phoenix-requirements.txt").read_bytes()
    stamp = (project / ".venv-phoenix/.thoughtledger-installed").read_text().strip()
    assert stamp == hashlib.sha256(requirements).hexdigest()

    before = calls(project)
    assert run(project).stdout == run(project, "--installed").stdout == executable + "\n"
    assert calls(project) == before

    with (project / "tools/phoenix-requirements.txt").open("a") as changed:
        changed.write("uvicorn==0.1\n")
    assert run(project, "--installed").returncode == 1
    assert run(project).returncode == 0
    assert len([line for line in calls(project) if line.startswith("uv ")]) == 2


def test_a_failed_install_says_so_and_is_tried_again(project: Path) -> None:
    (project / "uv-fails").touch()
    failed = run(project)
    assert failed.returncode == 1
    assert failed.stdout == ""
    assert "error: no solution for arize-phoenix" in failed.stderr
    assert failed.stderr.splitlines()[-1].startswith(
        "tools/phoenix_env: error: installing Phoenix into .venv-phoenix failed"
    )
    assert not (project / ".venv-phoenix/.thoughtledger-installed").exists()
    assert run(project, "--installed").returncode == 1

    (project / "uv-fails").unlink()
    assert run(project).returncode == 0
    assert run(project, "--installed").returncode == 0
