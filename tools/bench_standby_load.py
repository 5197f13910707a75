"""Appends on the primary while readers hammer its hot standby, against the same appends alone.

A child process keeps a few writers appending to the primary, one event per append (the next
thought of each writer's own session), for a fixed window whenever it is told to. The readers,
while they run, are a ``thoughtledger ui --read-url`` child process polled over HTTP (the
sessions list, a session, the analytics) by a few clients without pause, and ``stats`` computed
again and again through a read-only ledger on the standby, in this process. Rounds with and
without readers alternate (which goes first alternates too), all in one run on one pair of
servers; the ratio is the median appends/s with readers over the median without.

Usage: tools/bench standby   (this row comes after the others of :mod:`bench_standby`)
"""

import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from tests.support import pg_cluster
from tests.support.ui_app import ui_app
from thoughtledger.api.bootstrap import open_ledger
from thoughtledger.api.service import Ledger

Result = dict[str, Any]

WRITERS = 4
"""Concurrent writers on the primary, each appending to its own session."""
HTTP_READERS = 3
"""Clients polling the browser view (on the standby) without pause."""
STATS_READERS = 1
"""Tasks computing ``stats`` on the standby without pause."""
ROUNDS = 5
"""Rounds of each kind (with readers, without), interleaved."""
WINDOW = 3.0
"""Seconds the writers append in each round."""
SEED_SESSIONS = 200
"""Sessions on the ledger before the rounds, so the readers' pages and figures cost something."""
TARGET = 0.8


def _server_pids(cluster: pg_cluster.Cluster) -> list[int]:
    """The cluster's postmaster and the processes it has started so far."""
    postmaster = int((cluster.root / "data" / "postmaster.pid").read_text().split()[0])
    found = [postmaster]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # The parent's pid is the second field after the command's closing parenthesis.
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                found.append(int(stat.parent.name))
    return found


@contextlib.contextmanager
def _hosts_apart(pair: pg_cluster.Pair, writer_pid: int) -> Iterator[str]:
    """Pin the primary and the writers to one half of the CPUs, the standby and this process
    (the readers, and the ui it starts) to the other, as if each server had its own host; yield
    how they were placed. With fewer than 2 CPUs nothing is pinned."""
    mine = os.sched_getaffinity(0)
    cpus = sorted(mine)
    if len(cpus) < 2:
        yield "unpinned (one CPU)"
        return
    primary_side, standby_side = set(cpus[: len(cpus) // 2]), set(cpus[len(cpus) // 2 :])
    for pid in [*_server_pids(pair.primary), writer_pid]:
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(pid, primary_side)
    for pid in _server_pids(pair.standby):
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(pid, standby_side)
    os.sched_setaffinity(0, standby_side)
    try:
        yield (
            f"primary and writers on CPUs {sorted(primary_side)}, "
            f"standby and readers on {sorted(standby_side)}"
        )
    finally:
        os.sched_setaffinity(0, mine)
        for pid in [*_server_pids(pair.primary), *_server_pids(pair.standby), writer_pid]:
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(pid, mine)


def _thought(number: int, text: str = "") -> dict[str, Any]:
    return {
        "thought": text or f"thought {number}",
        "thought_number": number,
        "total_thoughts": number,
        "next_thought_needed": True,
    }


async def _append_on_request(url: str, writers: int) -> None:
    """The child: after ``ready``, each line on stdin is a window in seconds; the writers append
    for that long, then the child writes how many appends they made and in how many seconds."""
    async with open_ledger(url, ttl=None) as ledger:
        numbers = [1] * writers
        sessions = [(await ledger.think(None, _thought(1))).session_id for _ in range(writers)]
        print("ready", flush=True)
        while line := (await asyncio.to_thread(sys.stdin.readline)).strip():
            deadline = time.monotonic() + float(line)
            made = [0]

            async def write(index: int, deadline: float = deadline, made: list[int] = made) -> None:
                while time.monotonic() < deadline:
                    numbers[index] += 1
                    await ledger.think(sessions[index], _thought(numbers[index]))
                    made[0] += 1

            started = time.monotonic()
            await asyncio.gather(*(write(index) for index in range(writers)))
            print(made[0], time.monotonic() - started, flush=True)


async def _seed(url: str) -> list[str]:
    async with open_ledger(url, ttl=None) as ledger:
        made = []
        for index in range(SEED_SESSIONS):
            session_id = (await ledger.think(None, _thought(1, f"seed {index}"))).session_id
            for number in (2, 3, 4):
                await ledger.think(session_id, _thought(number, f"seed {index} step {number}"))
            made.append(session_id)
    return made


async def _hammer(
    read: Callable[[int], Awaitable[None]],
    counted: list[int],
    under_way: asyncio.Event,
    stop: asyncio.Event,
) -> None:
    turn = 0
    while not stop.is_set():
        await read(turn)
        counted[0] += 1
        turn += 1
        under_way.set()


def _http_reads(http: httpx.AsyncClient, sessions: list[str]) -> Callable[[int], Awaitable[None]]:
    async def read(turn: int) -> None:
        kind = turn % 3
        if kind == 0:
            path = "/api/sessions"
        elif kind == 1:
            path = f"/api/sessions/{sessions[turn % len(sessions)]}"
        else:
            path = "/api/stats"
        answer = await http.get(path)
        answer.raise_for_status()

    return read


def _stats_reads(ledger: Ledger) -> Callable[[int], Awaitable[None]]:
    async def read(_turn: int) -> None:
        await ledger.stats.summarize()

    return read


class _Writer:
    """The appending child process, driven a window at a time."""

    def __init__(self, url: str) -> None:
        command = [sys.executable, __file__, "append", url, str(WRITERS)]
        self._process = subprocess.Popen(  # noqa: S603  # our interpreter, our script
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._process.pid

    async def ready(self) -> None:
        assert self._process.stdout is not None
        line = await asyncio.to_thread(self._process.stdout.readline)
        assert line.strip() == "ready", line

    async def appends_per_second(self, window: float) -> float:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(f"{window}\n")
        self._process.stdin.flush()
        made, took = (await asyncio.to_thread(self._process.stdout.readline)).split()
        return int(made) / float(took)

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(60)


async def _round(
    writer: _Writer, reads: list[Callable[[int], Awaitable[None]]]
) -> tuple[float, float]:
    """Appends/s in one window, with ``reads`` hammering meanwhile; and their reads/s."""
    stop = asyncio.Event()
    counted = [0]
    under_way = [asyncio.Event() for _ in reads]
    tasks = [
        asyncio.create_task(_hammer(read, counted, started, stop))
        for read, started in zip(reads, under_way, strict=True)
    ]
    try:
        await asyncio.gather(*(started.wait() for started in under_way))  # every reader reads
        before, started = counted[0], time.monotonic()
        rate = await writer.appends_per_second(WINDOW)
        read_rate = (counted[0] - before) / (time.monotonic() - started)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    return rate, read_rate


async def appends_under_reads(pair: pg_cluster.Pair) -> list[Result]:
    """Two rows: the servers as if on hosts of their own (the target), then sharing every CPU."""
    # The suite's servers log every statement (its tests read the logs); a production server
    # does not, so the figure should not include the log's writes. The role's settings
    # replicate: new sessions on both servers log nothing.
    await asyncio.to_thread(
        pg_cluster.value, pair.primary, "ALTER ROLE postgres SET log_statement = 'none'"
    )
    sessions = await _seed(pair.primary.url)
    await asyncio.to_thread(pg_cluster.wait_replayed, pair)
    return [
        await _measured(pair, sessions, apart=True),
        await _measured(pair, sessions, apart=False),
    ]


async def _measured(pair: pg_cluster.Pair, sessions: list[str], *, apart: bool) -> Result:
    """Appends/s on the primary with readers on the standby over appends/s alone."""
    url, standby = pair.primary.url, pair.standby.url
    writer = _Writer(url)
    quiet: list[float] = []
    loaded: list[float] = []
    read_rates: list[float] = []
    try:
        await writer.ready()
        with (
            (
                _hosts_apart(pair, writer.pid) if apart else contextlib.nullcontext("unpinned")
            ) as placed,
            ui_app(url, None, "--read-url", standby) as app,
        ):
            async with (
                open_ledger(url, read_url=standby, read_only=True) as on_standby,
                httpx.AsyncClient(base_url=app.base, timeout=60) as http,
            ):
                reads = [_http_reads(http, sessions)] * HTTP_READERS
                reads += [_stats_reads(on_standby)] * STATS_READERS
                for number in range(ROUNDS):
                    for with_readers in (number % 2 == 1, number % 2 == 0):
                        rate, read_rate = await _round(writer, reads if with_readers else [])
                        (loaded if with_readers else quiet).append(rate)
                        if with_readers:
                            read_rates.append(read_rate)
    finally:
        writer.close()
    where = "each server on CPUs of its own" if apart else "every process sharing every CPU"
    return {
        "name": f"appends on the primary ({WRITERS} writers, one event an append) while "
        f"{HTTP_READERS} clients poll a `ui --read-url` and {STATS_READERS} computes stats on "
        f"the hot standby, vs the same appends with no readers ({where})",
        "ratio": round(statistics.median(loaded) / statistics.median(quiet), 2),
        **({"target": TARGET} if apart else {}),
        "appends_per_s": round(statistics.median(loaded)),
        "baseline_appends_per_s": round(statistics.median(quiet)),
        "standby_reads_per_s": round(statistics.median(read_rates), 1),
        "placed": placed,
        "rounds": ROUNDS,
        "window_s": WINDOW,
        "baseline": "the same writers with no readers, same run, rounds interleaved",
    }


if __name__ == "__main__" and sys.argv[1:2] == ["append"]:
    asyncio.run(_append_on_request(sys.argv[2], int(sys.argv[3])))
