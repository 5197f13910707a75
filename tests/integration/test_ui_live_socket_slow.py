"""A client that stops reading the live socket: closed with 1013, the server's memory bounded.

Tens of megabytes of events are appended while the client reads nothing; the app's resident
memory is sampled all along. A server that buffered for the client would grow with what was
appended, in the second half of the flood as in the first; a bounded one grows in the first
(caches warming, its buffer filling) and then no more. Then the client reads what reached it and
finds the close code.
"""

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from tests.support.backends import backend_for
from tests.support.live_socket import events_of, live_socket, subscribed
from tests.support.ui_app import ui_app
from thoughtledger import open_ledger
from thoughtledger.adapters.ui.live_socket import STALL_SECONDS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TEXT = 4000  # characters per thought
FLOOD = 8000  # thoughts appended while the client reads nothing (about 32 MB of text)


def _rss(pid: int) -> int:
    """The process's resident memory, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _step(number: int) -> dict[str, Any]:
    return {
        "thought": f"{number:08d} " + "x" * TEXT,
        "thought_number": number,
        "total_thoughts": number,
        "next_thought_needed": True,
    }


async def _read_to_the_end(socket: ClientConnection, versions: list[int]) -> None:
    """Read what reached the client before it was closed, noting each event's version."""
    while True:
        message = await asyncio.wait_for(socket.recv(), 20)
        versions.append(json.loads(message)["event"]["v"])


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_client_that_stops_reading_is_closed_and_the_server_stays_small(
    tmp_path: Path, kind: str
) -> None:
    async with backend_for(kind, tmp_path) as backend:
        assert backend.url is not None
        async with open_ledger(backend.url, ttl=None) as ledger:
            session = (await ledger.think(None, _step(1))).session_id
            with ui_app(backend.url, None) as app:
                async with live_socket(app, max_queue=4) as socket:
                    await subscribed(socket, {"sessions": [session], "after": 0})
                    # A warm-up the client reads: the baseline holds what serving costs.
                    for number in range(2, 202):
                        await ledger.think(session, _step(number))
                    warm = await events_of(socket, 202)
                    baseline = peak = _rss(app.pid)
                    began = time.monotonic()
                    for number in range(202, 202 + FLOOD):
                        await ledger.think(session, _step(number))
                        if number % 200 == 0:
                            peak = max(peak, _rss(app.pid))
                        if number == 202 + FLOOD // 2:
                            halfway = peak
                    flooded = time.monotonic() - began
                    await asyncio.sleep(STALL_SECONDS + 2)  # the server gives up on the client
                    peak = max(peak, _rss(app.pid))
                    versions = [item["event"]["v"] for item in warm]
                    with pytest.raises(ConnectionClosed) as closed:
                        await _read_to_the_end(socket, versions)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1013
    assert closed.value.rcvd.reason.startswith("too slow")
    # In order, none missing, none twice, up to where the server stopped: the client may resume.
    assert versions == list(range(1, len(versions) + 1))
    assert 202 < len(versions) < 202 + FLOOD
    appended = FLOOD * TEXT
    grown = peak - baseline
    print(
        f"appended {appended / 2**20:.1f} MiB in {flooded:.1f} s; "
        f"server grew {grown / 2**20:.1f} MiB, "
        f"{(peak - halfway) / 2**20:.1f} MiB in the second half"
    )
    # Not proportional to what was appended: the second half of the flood adds (almost) nothing.
    assert grown < appended / 2, (grown, appended)
    assert peak - halfway < appended / 2 / 8, (peak - halfway, appended / 2)
