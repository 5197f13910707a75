"""``serve --checkpoint-dir``: a real stdio server signs checkpoints as the log grows."""

import stat
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.mcp import thought
from tests.support.processes import ROOT, WAIT, child_env, serve_command, sqlite_in, thoughtledger
from thoughtledger.ledger.checkpoint import Checkpoint, Signer

pytestmark = pytest.mark.anyio


async def test_a_server_writes_checkpoints_as_it_runs_and_when_it_stops(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    signer = Signer.generate("ledger.example/log")
    key = tmp_path / "log.key"
    key.write_text(signer.encode() + "\n")
    public = tmp_path / "log.pub"
    public.write_text(signer.verifier().encode() + "\n")
    folder = tmp_path / "checkpoints"
    options = ["--checkpoint-dir", str(folder), "--checkpoint-key", str(key)]
    params = StdioServerParameters(
        command=sys.executable,
        args=[*serve_command(db)[1:], *options, "--checkpoint-every", "2"],
        cwd=ROOT,
        env=child_env(),
    )
    async with Client(params) as client:
        for number in (1, 2, 3):
            result = await client.call_tool("sequentialthinking", thought(number))
            assert result.is_error is False
        with anyio.fail_after(WAIT):  # written while serving, within a few seconds
            while not (folder / "latest").exists():  # noqa: ASYNC110  # another process writes it
                await anyio.sleep(0.1)
        result = await client.call_tool("sequentialthinking", thought(4, 5))
        assert result.is_error is False
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    latest = (folder / "latest").read_text()
    checkpoint = Checkpoint.open(latest, signer.verifier())
    # The last one is written as the server stops: every event recorded is in it.
    assert checkpoint.size == 5  # the session's start and four thoughts
    files = sorted(folder.iterdir())
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in files)
    assert folder / f"checkpoint-{checkpoint.size}" in files
    ran = thoughtledger(
        "verify", "--db", db, "--checkpoint", str(folder / "latest"), "--pubkey", str(public)
    )
    assert ran.returncode == 0, ran.stderr


def test_a_checkpoint_dir_without_a_key_is_a_usage_error(tmp_path: Path) -> None:
    ran = thoughtledger("serve", "--db", sqlite_in(tmp_path), "--checkpoint-dir", str(tmp_path))
    assert ran.returncode == 2
    assert ran.stderr == (
        "thoughtledger: error: --checkpoint-dir and --checkpoint-key go together\n"
    )
    assert not (tmp_path / "l.db").exists()
