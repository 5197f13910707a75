"""Each principal's pace of requests: its own requests wait past its burst while others are served.

Pure bookkeeping driven by a clock the test moves (the doors that use it are run against real
servers in ``tests/integration/test_http_fair_share.py`` and ``test_ui_fair_share.py``).
"""

import asyncio

import pytest

from thoughtledger.adapters.common.pacing import WAITING_MAX, Pacing
from thoughtledger.adapters.common.shares import ShareRefusedError


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_principal_alone_is_never_held_back_however_fast() -> None:
    clock = Clock()
    pacing = Pacing(rate=10, burst=3, clock=clock)
    assert [pacing.delay("mallory") for _ in range(50)] == [0.0] * 50


def test_past_its_burst_a_principal_waits_its_pace_while_another_is_served() -> None:
    clock = Clock()
    pacing = Pacing(rate=10, burst=3, clock=clock)
    assert pacing.delay("alice") == 0.0
    delays = [pacing.delay("mallory") for _ in range(6)]
    assert delays[:3] == [0.0] * 3
    # Each request past the burst a tenth of a second after the one before.
    assert delays[3:] == pytest.approx([0.1, 0.2, 0.3])
    # Alice, within her pace, is not held back by mallory's line.
    assert pacing.delay("alice") == 0.0


def test_a_principal_whose_neighbours_went_quiet_gets_a_fresh_burst() -> None:
    clock = Clock()
    pacing = Pacing(rate=10, burst=1, clock=clock)
    pacing.delay("alice")
    assert [pacing.delay("mallory") for _ in range(3)] == pytest.approx([0.0, 0.1, 0.2])
    clock.now += 5  # alice has sent nothing since
    assert [pacing.delay("mallory") for _ in range(3)] == [0.0] * 3


def test_the_unauthenticated_caller_is_one_principal_never_paced() -> None:
    clock = Clock()
    pacing = Pacing(rate=1, burst=1, clock=clock)
    pacing.delay("alice")
    assert [pacing.delay(None) for _ in range(10)] == [0.0] * 10


@pytest.mark.anyio
async def test_too_many_waiting_requests_of_one_principal_are_refused_not_anothers() -> None:
    clock = Clock()
    pacing = Pacing(rate=1, burst=1, clock=clock)
    pacing.delay("alice")
    pacing.delay("mallory")
    waiting = [asyncio.create_task(pacing.wait("mallory")) for _ in range(WAITING_MAX)]
    await asyncio.sleep(0)  # all of them asleep, waiting their turn
    with pytest.raises(ShareRefusedError, match="'mallory' already has 64 requests waiting"):
        await pacing.wait("mallory")
    assert pacing.delay("alice") == 0.0
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    # Its line gone, it waits its turn again rather than being refused.
    assert pacing.delay("mallory") > 0


def test_a_pace_needs_a_rate_and_a_burst() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Pacing(rate=0)
