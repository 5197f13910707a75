"""A ledger on a read-only mount can still be read, whether it was closed or its writer died.

The mount is real: a read-only bind mount in a mount namespace of the command's own (``unshare``),
so the kernel refuses every write there, to root too, and nothing leaks out of the test. Runs as
root, or as any user where unprivileged user namespaces are allowed; skipped elsewhere.
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import snapshot, sqlite_url
from tests.support.samples import record_sample

_IN_READ_ONLY_MOUNT = """
set -e
mount --bind "$1" "$2"
mount -o remount,bind,ro "$2"
if touch "$2/probe" 2>/dev/null; then echo "the mount is writable" >&2; exit 97; fi
shift 2
exec "$@"
"""


def namespace_prefix() -> list[str]:
    """The command that runs a program in a mount namespace of its own, where it may mount."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        pytest.skip("needs Linux and unshare")
    prefix = ["unshare", "--mount"]
    if os.geteuid() != 0:
        prefix = ["unshare", "--user", "--map-root-user", "--mount"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, check=False)  # noqa: S603
    if probe.returncode != 0:
        pytest.skip(f"cannot make a mount namespace here: {probe.stderr.decode().strip()}")
    return prefix


def read_on_read_only_mount(
    folder: Path, mount: Path, *argv: str
) -> subprocess.CompletedProcess[str]:
    """Run ``thoughtledger ARGV`` with ``folder`` mounted read-only at ``mount``."""
    mount.mkdir(exist_ok=True)
    command = [
        *namespace_prefix(),
        "sh",
        "-c",
        _IN_READ_ONLY_MOUNT,
        "sh",
        str(folder),
        str(mount),
        sys.executable,
        "-m",
        "thoughtledger.adapters.cli",
        *argv,
        "--db",
        sqlite_url(mount / "ledger.db"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603
    assert done.returncode != 97, done.stderr
    return done


def test_a_closed_ledger_on_a_read_only_mount_is_read(tmp_path: Path) -> None:
    sample = tmp_path / "ledger" / "ledger.db"
    asyncio.run(record_sample(sqlite_url(sample)))
    before = snapshot(sample.parent)
    assert before.keys() == {"ledger.db"}  # closed: no -wal, so nothing can be created beside it
    listed = read_on_read_only_mount(sample.parent, tmp_path / "mnt", "sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {row["sessionId"] for row in json.loads(listed.stdout)} >= {"s-a", "s-b", "s-e"}
    verified = read_on_read_only_mount(sample.parent, tmp_path / "mnt", "verify")
    assert verified.returncode == 0, verified.stderr
    assert snapshot(sample.parent) == before


_DIE_WITH_THE_LEDGER_OPEN = """
import asyncio, os, sys
from thoughtledger import open_ledger

async def main():
    async with open_ledger(sys.argv[1]) as ledger:
        for number in (1, 2):
            await ledger.think("only-in-the-wal", {"thought": "t", "thought_number": number,
                               "total_thoughts": 2, "next_thought_needed": number < 2})
        os._exit(0)  # as a killed server: no close, no checkpoint; the thoughts stay in the WAL

asyncio.run(main())
"""


def test_a_ledger_whose_writer_died_is_read_from_its_wal_on_a_read_only_mount(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ledger"
    writer = subprocess.run(  # noqa: S603  # our own interpreter on a fixed script
        [sys.executable, "-c", _DIE_WITH_THE_LEDGER_OPEN, sqlite_url(folder / "ledger.db")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert writer.returncode == 0, writer.stderr
    assert Path(f"{folder / 'ledger.db'}-wal").stat().st_size > 0
    shown = read_on_read_only_mount(folder, tmp_path / "mnt", "show", "only-in-the-wal", "--json")
    assert shown.returncode == 0, shown.stderr
    assert len(json.loads(shown.stdout)["thoughts"]) == 2
