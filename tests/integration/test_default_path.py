"""Where the ledger lives when no URL is given: the system's data folder, as platformdirs knows it.

Run on Linux only (as CI is): the macOS and Windows folders are platformdirs' conventions,
not run here.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from thoughtledger.api.bootstrap import default_path, resolve_url

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the Linux conventions; other systems follow platformdirs'"
)


def test_the_default_ledger_follows_xdg_data_home_else_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("THOUGHTLEDGER_URL", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "thoughtledger" / "ledger.db"
    assert resolve_url() == f"sqlite:///{tmp_path / 'xdg' / 'thoughtledger' / 'ledger.db'}"
    in_home = tmp_path / "home" / ".local" / "share" / "thoughtledger" / "ledger.db"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # the XDG spec: ignore a relative path
    assert default_path() == in_home
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_path() == in_home
    monkeypatch.setenv("THOUGHTLEDGER_URL", "sqlite:///elsewhere.db")
    assert resolve_url() == "sqlite:///elsewhere.db"
    assert resolve_url("memory://") == "memory://"


def test_reading_the_default_ledger_before_there_is_one_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "THOUGHTLEDGER_URL")}
    done = subprocess.run(  # our own interpreter and module
        [sys.executable, "-m", "thoughtledger.adapters.cli", "sessions"],
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
        check=False,
    )
    expected = home / ".local" / "share" / "thoughtledger" / "ledger.db"
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"thoughtledger: error: no ledger at {expected}; it is made by the first thought an "
        "agent records (thoughtledger serve), or by record or import\n"
    )
    assert list(home.iterdir()) == []
