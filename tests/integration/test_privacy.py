"""A ledger is private to its owner: folders created 0700, the database and its -wal and -shm 0600,
whatever the umask."""

import asyncio
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import cli, sqlite_url
from thoughtledger import open_ledger


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which new files are readable by every local user."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def thought(number: int) -> dict[str, Any]:
    return {
        "thought": "a private thought",
        "thought_number": number,
        "total_thoughts": 2,
        "next_thought_needed": True,
    }


@pytest.mark.usefixtures("umask_022")
@pytest.mark.anyio
async def test_a_new_ledger_its_wal_and_its_folders_are_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "nested" / "ledger.db"
    async with open_ledger(sqlite_url(path)) as ledger:
        await ledger.think(None, thought(1))
        # While it is open the ledger has its -wal and -shm: every thought is in them first.
        assert {p.name: mode(p) for p in path.parent.iterdir()} == {
            "ledger.db": 0o600,
            "ledger.db-wal": 0o600,
            "ledger.db-shm": 0o600,
        }
    assert (mode(tmp_path / "new"), mode(tmp_path / "new" / "nested")) == (0o700, 0o700)
    assert mode(path) == 0o600


@pytest.mark.usefixtures("umask_022")
@pytest.mark.anyio
async def test_the_default_ledger_and_the_data_folders_made_for_it_are_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("THOUGHTLEDGER_URL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    async with open_ledger() as ledger:
        await ledger.think(None, thought(1))
    assert mode(tmp_path / "data") == 0o700
    assert mode(tmp_path / "data" / "thoughtledger") == 0o700
    assert mode(tmp_path / "data" / "thoughtledger" / "ledger.db") == 0o600


@pytest.mark.usefixtures("umask_022")
def test_import_creates_a_private_ledger_and_keeps_an_existing_folders_mode(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    source = tmp_path / "source.db"
    asyncio.run(record(sqlite_url(source)))
    export = tmp_path / "export.jsonl"
    assert cli(capsys, "export", "--all", "-o", str(export), "--db", sqlite_url(source)).code == 0
    target = shared / "ledger.db"
    ran = cli(capsys, "import", str(export), "--db", sqlite_url(target))
    assert ran.code == 0, ran.err
    assert mode(target) == 0o600
    assert mode(shared) == 0o755  # a folder that was there already is not ours to change


async def record(url: str) -> None:
    async with open_ledger(url) as ledger:
        await ledger.think(None, thought(1))


@pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root (to act as another user, with setpriv) on Linux",
)
@pytest.mark.usefixtures("umask_022")
def test_another_local_user_cannot_read_the_ledger() -> None:
    # Outside pytest's own temporary folder, which no other user may enter anyway.
    home = Path(tempfile.mkdtemp(prefix="thoughtledger-privacy-"))
    try:
        home.chmod(0o755)  # a home folder any local user may enter, as on many systems
        asyncio.run(record(sqlite_url(home / "ledger.db")))
        (home / "notes.txt").write_text("readable by all\n")  # 0644: proves the test can see
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat"]
        readable = subprocess.run(  # noqa: S603  # a fixed command on files this test made
            [*as_nobody, str(home / "notes.txt")], capture_output=True, check=False
        )
        assert readable.returncode == 0
        refused = subprocess.run(  # noqa: S603  # a fixed command on files this test made
            [*as_nobody, str(home / "ledger.db")], capture_output=True, text=True, check=False
        )
        assert refused.returncode != 0
        assert "Permission denied" in refused.stderr
    finally:
        shutil.rmtree(home)
