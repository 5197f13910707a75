"""Helpers the CLI tests share: running ``main``, ledgers to run it on, sample sessions."""

import asyncio
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from api import open_ledger
from api.cli import main
from tests.backends import pg_url


@dataclass(frozen=True)
class Ran:
    """What one run of the command line did."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Ran:
    """Run ``thoughtledger ARGV`` in this process and capture what it printed."""
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return Ran(code, captured.out, captured.err)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def demo(capsys: pytest.CaptureFixture[str], url: str) -> str:
    """Record the demo session into ``url``; return its id."""
    ran = cli(capsys, "demo", "--db", url, "--json")
    assert ran.code == 0, ran.err
    session_id: str = ran.json()["sessionId"]
    return session_id


class Clock:
    """A clock for recording: starts just before midnight and moves on irregularly per reading."""

    STEPS = (1.5, 7.25, 0.75, 30.0, 2.125)

    def __init__(self, start: datetime = datetime(2024, 5, 1, 23, 59, tzinfo=UTC)) -> None:
        self.now = start
        self.readings = 0

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=self.STEPS[self.readings % len(self.STEPS)])
        self.readings += 1
        return self.now


def thought(number: int, total: int, *, more: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": more,
        **extra,
    }


SAMPLE: list[tuple[str, dict[str, str], list[dict[str, Any]]]] = [
    (
        "s-a",
        {"agent": "planner", "client": "desktop"},
        [
            thought(1, 3),
            thought(2, 3),
            thought(3, 3, is_revision=True, revises_thought=1),
            thought(4, 3, more=False),
        ],
    ),
    (
        "s-b",
        {"agent": "planner", "client": "cursor"},
        [
            thought(1, 4),
            thought(2, 4, branch_from_thought=1, branch_id="x"),
            thought(3, 4, branch_from_thought=1, branch_id="x"),
            thought(2, 4, branch_from_thought=1, branch_id="y"),
        ],
    ),
    ("s-c", {"agent": "coder", "client": "desktop"}, [thought(1, 2)]),
    ("s-d", {}, [thought(1, 3), thought(2, 3), thought(3, 3, more=False)]),
    (
        "s-e",
        {"agent": "coder"},
        [thought(1, 5), thought(2, 2, is_revision=True, revises_thought=1), thought(3, 3)],
    ),
]
"""Sessions with revisions, branches, a raised and a lowered estimate, a clear, two days."""


async def record_sample(url: str, clock: Clock | None = None) -> None:
    """Record :data:`SAMPLE` into the ledger at ``url`` (``s-c`` is cleared afterwards)."""
    async with open_ledger(url, ttl=None, clock=clock or Clock()) as ledger:
        for session_id, metadata, thoughts in SAMPLE:
            session = ledger.session(session_id, metadata=metadata)
            for arguments in thoughts:
                await session.think(**arguments)
        await ledger.clear_session("s-c", reason="done")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty ledger: a SQLite file, or a fresh PostgreSQL schema (dropped after)."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path / "ledger.db")
        return
    base = pg_url()
    if base is None:
        pytest.skip("no PostgreSQL configured (set THOUGHTLEDGER_TEST_PG_URL)")
    schema = f"tl_cli_{uuid.uuid4().hex[:12]}"
    yield f"{base}?schema={schema}"

    async def drop() -> None:
        engine = create_async_engine(base)
        try:
            async with engine.begin() as connection:
                await connection.execute(sa.schema.DropSchema(schema, cascade=True, if_exists=True))
        finally:
            await engine.dispose()

    asyncio.run(drop())


@pytest.fixture(autouse=True)
def _no_ambient_ledger(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never touch the user's ledger: no URL from the environment, data under tmp."""
    monkeypatch.delenv("THOUGHTLEDGER_URL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
