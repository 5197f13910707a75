"""Several processes writing one ledger, some to the same sessions: nothing lost or duplicated."""

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.reliability.conftest import Target
from thoughtledger.api.bootstrap import open_store

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
PROCESSES, TASKS, COUNT = 4, 2, 25


async def test_four_processes_lose_and_duplicate_nothing(target: Target) -> None:
    # Plain Popen: the children run on their own; the event loop has nothing to do meanwhile.
    children = [
        subprocess.Popen(  # noqa: S603, ASYNC220  # our interpreter and module, no shell
            [
                sys.executable,
                "-m",
                "tests.reliability.worker",
                target.url,
                "think",
                f"p{p}",
                str(TASKS),
                str(COUNT),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(PROCESSES)
    ]
    acks: list[tuple[str, str]] = []
    for child in children:
        out, err = child.communicate(timeout=240)
        assert child.returncode == 0, f"a writer failed:\n{err}"
        assert "database is locked" not in err
        lines = out.splitlines()
        assert lines[-1] == "done"
        acks += [(line.split()[1], line.split()[2]) for line in lines[:-1]]
    assert len(acks) == PROCESSES * TASKS * COUNT

    store = await open_store(target.url)
    try:
        stored: list[tuple[str, str]] = []
        for session in sorted({session for session, _ in acks}):
            records = await store.read_stream(session)
            assert [r.version for r in records] == list(range(1, len(records) + 1))
            assert (await store.verify(session)).ok
            stored += [(session, r.event.thought) for r in records if hasattr(r.event, "thought")]
    finally:
        await store.aclose()
    assert Counter(stored) == Counter(acks)
