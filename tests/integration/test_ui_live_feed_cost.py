"""Opening the browser view's live feed costs what the events after its position cost.

The feed once folded every event of the session on each open to find loop marks, whatever
``after`` said: on a long session each open cost seconds and hundreds of megabytes, and a few
opens stalled every other request. A real ``ui`` over SQLite, a long session and a short one:
the time from a new thought to its arrival on a freshly opened feed is about the same on both
(a ratio in the same run, never an absolute time), and a repeat is still marked with the
number of the thought it repeats.
"""

import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.processes import WAIT, sqlite_in
from tests.support.ui_app import UiApp, ui_app
from thoughtledger import open_ledger

LONG = 10_000
"""Thoughts in the long session (the harm grew with it: 200,000 cost seconds an open; at this
length a fold of the whole session on open still takes many times a short one's arrival)."""
TRIES = 3


def _step(number: int, text: str) -> dict[str, Any]:
    return {
        "thought": text,
        "thought_number": number,
        "total_thoughts": number,
        "next_thought_needed": True,
    }


async def _sessions(db: str) -> tuple[str, str]:
    async with open_ledger(db, ttl=None) as ledger:
        short = (await ledger.think(None, _step(1, "a short session"))).session_id
        first = await ledger.batches.think(None, [_step(1, "thought 1 of a long session")])
        long = first[-1].session_id
        for start in range(2, LONG + 1, 1000):
            batch = [
                _step(n, f"thought {n}: weighing option {n % 97} against {n * 7919 % 10007}")
                for n in range(start, min(start + 1000, LONG + 1))
            ]
            await ledger.batches.think(long, batch)
        # The marks taken in now, as a ledger at rest has them: the ui's own catch-up of a
        # fresh 30,000-thought import would otherwise share the processor with the timings.
        await ledger.loops.catch_up()
        return short, long


async def _arrival(
    app: UiApp, db: str, session_id: str, number: int, text: str
) -> tuple[float, Any]:
    """Open the feed at the session's end, record one thought; seconds until it arrives."""
    async with open_ledger(db, ttl=None) as ledger:
        last = (await ledger.events(session_id))[-1]
        number = max(number, 2)
        async with (
            httpx.AsyncClient(base_url=app.base, timeout=WAIT) as http,
            http.stream(
                "GET", f"api/sessions/{session_id}/live", params={"after": last.position}
            ) as stream,
        ):
            lines = stream.aiter_lines()
            assert await anext(lines) == ": following"
            started = time.perf_counter()
            await ledger.think(session_id, _step(number, text))
            async with asyncio.timeout(WAIT):
                async for line in lines:
                    if line.startswith("data: "):
                        return time.perf_counter() - started, json.loads(line[6:])
    raise AssertionError("the feed ended before the thought arrived")


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_fresh_feed_on_a_long_session_answers_as_fast_as_on_a_short_one(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    short, long = await _sessions(db)
    with ui_app(db, None) as app:
        short_times, long_times = [], []
        for attempt in range(TRIES):
            took, _ = await _arrival(app, db, short, 2 + attempt, f"short {attempt}")
            short_times.append(took)
            took, _ = await _arrival(app, db, long, LONG + 1 + attempt, f"long {attempt}")
            long_times.append(took)
        # A repeat of a thought long before the feed opened is marked with that one's number.
        _, repeat = await _arrival(
            app,
            db,
            long,
            LONG + 1 + TRIES,
            f"thought {LONG}: weighing option {LONG % 97} against {LONG * 7919 % 10007}",
        )
    ratio = statistics.median(long_times) / statistics.median(short_times)
    print(f"feed arrival: short {short_times}, long {long_times}, ratio {ratio:.2f}")
    assert ratio < 4, (short_times, long_times)
    assert repeat["rpn"] == LONG
