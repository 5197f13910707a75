"""After ``record`` or ``import``, the loop marks are taken in: later reads fold nothing again.

A bulk write appends more than a closing ledger takes in by itself; unless the command settles
the marks, every ``stats`` (a read, which writes nothing) would fold the missing part again. The
analyst's SQL says whether a session's stored marks are current.
"""

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.backends import Backend, backend_for
from tests.support.processes import thoughtledger
from tests.support.views import view_column
from thoughtledger.ledger.store.columns import SESSION_LOOPS_VIEW

pytestmark = pytest.mark.anyio

SESSIONS = 6
THOUGHTS = 1000  # 6,000 thoughts: past what a closing ledger takes in (4 pages of 1,000)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def durable(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as chosen:
        yield chosen


def _calls(path: Path) -> Path:
    lines = []
    for session in range(SESSIONS):
        for number in range(1, THOUGHTS + 1):
            # Every tenth thought says again what the one before it said: repeats to mark.
            said = number - 1 if number % 10 == 0 else number
            call = {
                "thought": f"session {session} checks the replica lag of shard {said} again",
                "thoughtNumber": number,
                "totalThoughts": THOUGHTS,
                "nextThoughtNeeded": number < THOUGHTS,
                "sessionId": f"bulk-{session}",
            }
            lines.append(json.dumps(call))
    path.write_text("\n".join(lines) + "\n")
    return path


async def _current(backend: Backend) -> list[bool]:
    return [
        bool(value)
        for value in await view_column(backend, SESSION_LOOPS_VIEW, "marks_current", "session_id")
    ]


async def test_record_leaves_every_session_s_loop_marks_current(
    durable: Backend, tmp_path: Path
) -> None:
    assert durable.url is not None
    done = thoughtledger("record", str(_calls(tmp_path / "calls.jsonl")), "--db", durable.url)
    assert done.returncode == 0, done.stderr
    assert await _current(durable) == [True] * SESSIONS


async def test_import_leaves_every_session_s_loop_marks_current(
    durable: Backend, tmp_path: Path
) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    recorded = thoughtledger("record", str(_calls(tmp_path / "calls.jsonl")), "--db", source)
    assert recorded.returncode == 0, recorded.stderr
    exported = tmp_path / "all.jsonl"
    done = thoughtledger("export", "--all", "-o", str(exported), "--db", source)
    assert done.returncode == 0, done.stderr
    assert durable.url is not None
    imported = thoughtledger("import", str(exported), "--db", durable.url)
    assert imported.returncode == 0, imported.stderr
    assert await _current(durable) == [True] * SESSIONS
