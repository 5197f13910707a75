"""``tools/run`` as a new user runs it: a copy of the project whose ``.venv`` is this checkout.

The install itself is ``tests/integration/test_tools_env.py``'s subject; here the scripts run with
an installed ``thoughtledger`` that is the code under test, in a fresh ``HOME``.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tools_project(tmp_path: Path) -> Path:
    """A copy of the project's tools whose ``.venv`` is installed: this checkout."""
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    for name in ("tools/_env.sh", "tools/run", "pyproject.toml"):
        shutil.copy2(ROOT / name, project / name)
    bin_dir = project / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "thoughtledger"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m thoughtledger "$@"\n')
    script.chmod(0o755)
    digest = hashlib.sha256((project / "pyproject.toml").read_bytes()).hexdigest()
    (project / ".venv" / ".thoughtledger-installed").write_text(f"core {digest}\n")
    return project


def fresh_env(home: Path) -> dict[str, str]:
    """A new user's environment: a fresh HOME, no ledger configured, this checkout importable."""
    keep = ("PATH", "PYTHONPATH", "LANG", "SYSTEMROOT")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**env, "HOME": str(home)}


def tools_run(
    project: Path, home: Path, *args: str, terminal: bool = False
) -> subprocess.CompletedProcess[str]:
    """``tools/run ARGS`` from the user's own folder (stdin a terminal when ``terminal``)."""
    primary, secondary = os.openpty() if terminal else (None, None)
    try:
        return subprocess.run(  # noqa: S603  # the project's own script
            [str(project / "tools" / "run"), *args],
            cwd=home,
            env=fresh_env(home),
            stdin=secondary if terminal else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        for fd in (primary, secondary):
            if fd is not None:
                os.close(fd)
