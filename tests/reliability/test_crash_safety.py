"""Every acknowledged append survives SIGKILL at any moment; nothing partial is ever stored."""

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability.conftest import Target
from thoughtledger.api.bootstrap import open_store

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
CYCLES = int(os.environ.get("THOUGHTLEDGER_CRASH_CYCLES", "6"))


def _kill_after_some_acks(url: str, rng: random.Random) -> int:
    """Start a writer, let it acknowledge a random number of batches, SIGKILL it mid-stream."""
    child = subprocess.Popen(  # noqa: S603  # our own interpreter and module, no shell
        [sys.executable, "-m", "tests.reliability.worker", url, "batches", "crashy"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    wanted = rng.randint(1, 60)
    last_ack = 0
    try:
        for line in child.stdout:
            if line.startswith("ack "):
                last_ack = int(line.split()[1])
                wanted -= 1
                if wanted == 0:
                    break
        else:
            pytest.fail(f"writer exited early: {child.stderr.read() if child.stderr else ''}")
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)  # reap it and close its pipes
    return last_ack


async def test_acknowledged_appends_survive_sigkill_and_nothing_partial_exists(
    target: Target,
) -> None:
    rng = random.Random(20261121)  # noqa: S311  # reproducible kill points, not secrets
    for cycle in range(CYCLES):
        acknowledged = _kill_after_some_acks(target.url, rng)
        store = await open_store(target.url)
        try:
            stored = await store.read_stream("crashy")
            report = await store.verify("crashy")
        finally:
            await store.aclose()
        assert report.ok, f"cycle {cycle}: {report}"
        assert len(stored) >= acknowledged, f"cycle {cycle}: lost acknowledged events"
        assert len(stored) % 3 == 0, f"cycle {cycle}: a partial batch is stored"
        assert [r.version for r in stored] == list(range(1, len(stored) + 1))
