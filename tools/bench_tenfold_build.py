"""The scale bench's ledger: 10M thoughts in 100k sessions, recorded as users record them.

Part of ``tools/bench scale`` (see :mod:`bench_tenfold`, which measures what this builds): JSON
Lines piped into ``thoughtledger record``, :data:`WRITERS` processes side by side and the long
session one run at a time beside them; a kept ledger (``--scale-db``) is reused, continued when
cut short, or measured as it is.
"""

import asyncio
import json
import random
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

Result = dict[str, Any]

FILE_THOUGHTS = 100_000
"""The most thoughts ``record`` takes from one input."""
RUN = 1_000
"""The most thoughts of one session ``record`` takes in one input."""
WORDS = [
    "cache",
    "replica",
    "job",
    "reads",
    "writes",
    "index",
    "query",
    "plan",
    "timeout",
    "retry",
    "lock",
    "queue",
    "worker",
    "budget",
    "latency",
    "error",
    "user",
    "table",
    "row",
    "page",
    "scan",
    "join",
    "sort",
    "hash",
    "merge",
    "key",
    "value",
    "store",
    "schema",
    "migration",
    "deploy",
    "rollback",
    "alert",
    "metric",
    "trace",
    "span",
    "token",
    "model",
    "prompt",
    "answer",
    "check",
]


def launcher() -> list[str]:
    script = Path(sys.executable).parent / "thoughtledger"
    return [str(script)] if script.exists() else [sys.executable, "-m", "thoughtledger"]


def _line(rng: random.Random, session: str, n: int, total: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(36))
    return json.dumps(
        {
            "thought": text,
            "thoughtNumber": n,
            "totalThoughts": total,
            "nextThoughtNeeded": n < total,
            "sessionId": session,
        }
    )


def _runs(rng: random.Random, big_id: str, big: int) -> list[str]:
    """The long session's runs, in order: ``record`` continues a session one run per input."""
    return [
        "\n".join(_line(rng, big_id, n, big) for n in range(start + 1, min(start + RUN, big) + 1))
        for start in range(0, big, RUN)
    ]


def _files(rng: random.Random, thoughts: int, sessions: int) -> Iterator[str]:
    """The other sessions' inputs, each at most :data:`FILE_THOUGHTS` thoughts, made as needed."""
    lines: list[str] = []
    for index in range(sessions):
        length = thoughts // sessions + (1 if index < thoughts % sessions else 0)
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if lines and len(lines) + length > FILE_THOUGHTS:
            yield "\n".join(lines)
            lines = []
        lines.extend(_line(rng, session, n, length) for n in range(1, length + 1))
    if lines:
        yield "\n".join(lines)


WRITERS = 2
"""``record`` processes writing the other sessions at once (agents write side by side)."""


def _record(db: str, body: str) -> int:
    """Record one input with a ``record`` process; its bytes.

    Raises:
        RuntimeError: The process failed.
    """
    data = (body + "\n").encode()
    process = subprocess.run(  # noqa: S603  # the bench's own command
        [*launcher(), "record", "-", "--db", db],
        input=data,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    if process.returncode != 0:
        raise RuntimeError(f"record failed: {process.stderr.decode()[-400:]}")
    return len(data)


def build(
    db: str, thoughts: int, sessions: int, big: int, *, held: tuple[int, int, int] | None = None
) -> tuple[str, float, int]:
    """Record the ledger; the long session's id, the seconds it took, and the input's bytes.

    The long session's runs go in order through one ``record`` at a time, beside
    :data:`WRITERS` ``record`` processes taking the other sessions' files. ``held`` (thoughts,
    sessions, the long session's thoughts) continues a ledger cut short: only what it lacks is
    recorded (other sessions drawn afresh), and the figures are those of that part.

    Raises:
        RuntimeError: A ``record`` process failed.
    """
    from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

    big_id = str(uuid.UUID(int=random.Random(1).getrandbits(128), version=4))
    have, have_sessions, have_big = held or (0, 0, 0)
    rng = random.Random(38 if held is None else 39)
    runs = _runs(rng, big_id, big)[have_big // RUN :]
    thoughts -= have - have_big  # the other sessions still to record, and how many of them
    sessions -= have_sessions - (1 if have_big else 0)
    start = time.perf_counter()
    written = 0 if held else _record(db, runs.pop(0))  # created once, before the writers open it
    done = 0
    stop = threading.Event()  # a failed writer ends the build: the long session stops too

    def grow() -> int:
        return sum(_record(db, run) for run in runs if not stop.is_set())

    with ThreadPoolExecutor(WRITERS + 1) as pool:
        long_session = pool.submit(grow)
        pending: set[Future[int]] = set()
        try:
            for body in _files(rng, thoughts - big, sessions - 1):
                if len(pending) == WRITERS:  # the next file is made while these record
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    written += sum(future.result() for future in finished)
                pending.add(pool.submit(_record, db, body))
                done += body.count("\n") + 1
                rate = done / (time.perf_counter() - start)
                print(
                    f"  recording {done:,} of {thoughts - big:,} ({rate:,.0f}/s)", file=sys.stderr
                )
            written += sum(future.result() for future in pending)
        except BaseException:
            stop.set()
            raise
        written += long_session.result()
    return big_id, time.perf_counter() - start, written


@asynccontextmanager
async def pg_database(url: str, keep: Path | None = None) -> AsyncIterator[str]:
    """A database for the scale ledger: a fresh one dropped at the end, or, with ``keep``
    (the path of the build's marker file), ``tl_scale_<its stem>``, kept for the next run."""
    import asyncpg

    name = f"tl_scale_{keep.stem if keep else uuid.uuid4().hex[:8]}"
    admin = url.replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(admin)
    if not await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
        await connection.execute(f'CREATE DATABASE "{name}"')
        if keep is not None:  # a marker left by a database dropped since describes nothing
            await asyncio.to_thread(Path(str(keep) + ".built").unlink, missing_ok=True)
    await connection.close()
    try:
        yield url.rsplit("/", 1)[0] + "/" + name
    finally:
        if keep is None:
            connection = await asyncpg.connect(admin)
            await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await connection.close()


def built_row(
    db: str, keep: Path | None, thoughts: int, sessions: int, big: int, *, resume: bool = False
) -> Result:
    """Build the ledger (or reuse the kept one): the build's row, with the long session's id.

    With ``resume``, a kept ledger cut short is recorded on to the asked size, and the row
    gives the figures of the part recorded now.
    """
    marker = Path(str(keep) + ".built") if keep else None
    held = _held(db) if resume and keep is not None and keep.exists() else None
    if marker is not None and marker.exists():
        big_id, built_s, written, recorded = json.loads(marker.read_text())
    else:
        if keep is not None and held is None and db.startswith("sqlite"):
            keep.unlink(missing_ok=True)
        big_id, built_s, written = build(db, thoughts, sessions, big, held=held)
        recorded = thoughts - (held[0] if held else 0)  # the figures are of what was recorded
        if marker is not None:
            marker.write_text(json.dumps([big_id, built_s, written, recorded]))
    row: Result = {
        "name": f"scale: record {thoughts:,} thoughts in {sessions:,} sessions",
        "big_id": big_id,
        "thoughts_per_s": round(recorded / built_s),
        "build_s": round(built_s),
        "input_bytes_per_thought": round(written / recorded),
    }
    if recorded != thoughts:
        row["name"] += f" ({recorded:,} of them recorded onto a ledger cut short)"
    if db.startswith("sqlite"):
        size = Path(db.removeprefix("sqlite:///")).stat().st_size
        row["bytes_per_thought"] = round(size / thoughts)
        row["ratio"] = round(size / (written / recorded * thoughts), 2)
        row["target"] = 1.6
        row["lower_is_better"] = True
        row["baseline"] = "the thoughts as record input lines (file bytes / input bytes)"
    return row


def _held(db: str) -> tuple[int, int, int]:
    """What a kept SQLite ledger holds: thoughts, sessions, and the long session's thoughts."""
    import sqlite3

    big_id = str(uuid.UUID(int=random.Random(1).getrandbits(128), version=4))
    connection = sqlite3.connect(f"file:{db.removeprefix('sqlite:///')}?mode=ro", uri=True)
    try:
        thoughts, sessions = connection.execute(
            "SELECT count(*), count(DISTINCT session_id) FROM tl_thoughts"
        ).fetchone()
        (big,) = connection.execute(
            "SELECT count(*) FROM tl_thoughts WHERE session_id = ?", (big_id,)
        ).fetchone()
    finally:
        connection.close()
    return int(thoughts), int(sessions), int(big)


def as_built_row(db: str) -> tuple[Result, int, int]:
    """The kept SQLite ledger as it is (a build cut short): its row, thoughts and long session.

    Every figure after it is named by the thoughts the ledger really holds.
    """
    thoughts, sessions, big = _held(db)
    row: Result = {
        "name": f"scale: the kept ledger as built, {thoughts:,} thoughts in {sessions:,} sessions",
        "bytes_per_thought": round(Path(db.removeprefix("sqlite:///")).stat().st_size / thoughts),
        "baseline": "none: a build cut short, measured as it is",
        "big_id": str(uuid.UUID(int=random.Random(1).getrandbits(128), version=4)),
    }
    return row, thoughts, big
