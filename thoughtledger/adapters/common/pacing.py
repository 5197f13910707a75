"""Each principal's pace of requests while another principal is being served too.

A principal within its rights can send requests as fast as its answers come: sign-ins, refused
``initialize`` calls, searches, pages. Each is cheap, but a flood of them from several
connections keeps the server (and, on a small machine, every core) busy, and every other
principal's calls wait for the CPU. So while another principal has sent a request in the last
:data:`ACTIVE_SECONDS`, a principal's requests past :data:`BURST` in a row go at most
:data:`RATE` a second: the rest wait (the generic cell rate algorithm), its own requests, never
another's. A principal alone on the server is never held back, and one within the rate never
notices; past :data:`WAITING_MAX` waiting requests, the next is refused (429), so that waiting
requests cannot fill the server's connections. The principal ``None`` (no authentication: every
caller is one principal) is never paced. Pure bookkeeping and a sleep; each door says how a
refusal reaches its client.
"""

import asyncio
import time
from collections.abc import Callable

from thoughtledger.adapters.common.shares import ShareRefusedError

RATE = 50.0
"""Requests a second one principal's requests go at, past its burst, while others are served."""
BURST = 50
"""Requests in a row a principal may send at once before its pace counts."""
ACTIVE_SECONDS = 1.0
"""How recently another principal must have sent a request for the pace to apply."""
WAITING_MAX = 64
"""Requests of one principal that may wait at once; the next is refused."""


class Pacing:
    """The pace of each principal's requests on one server.

    Args:
        rate: Requests a second past the burst, while another principal is active.
        burst: Requests in a row before the pace counts.
        clock: Monotonic seconds (a parameter so that tests can move it).

    Raises:
        ValueError: A rate or burst below 1.
    """

    def __init__(
        self,
        rate: float = RATE,
        burst: int = BURST,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate < 1 or burst < 1:
            raise ValueError("a pace needs a rate and a burst of at least 1")
        self._interval = 1.0 / rate
        self._tolerance = (burst - 1) * self._interval
        self._clock = clock
        self._due: dict[str, float] = {}
        """Each principal's theoretical arrival time: when its next request is on pace."""
        self._seen: dict[str, float] = {}
        self._waiting: dict[str, int] = {}

    def delay(self, principal: str | None) -> float:
        """Seconds a request of ``principal`` arriving now must wait (0: go now).

        Raises:
            ShareRefusedError: ``principal`` already has :data:`WAITING_MAX` requests waiting.
        """
        if principal is None:
            return 0.0
        now = self._clock()
        self._seen[principal] = now
        if not self._others_active(principal, now):
            self._due.pop(principal, None)  # alone: nothing to share, a fresh burst after
            return 0.0
        due = max(self._due.get(principal, now), now)
        wait = due - self._tolerance - now
        if wait > 0 and self._waiting.get(principal, 0) >= WAITING_MAX:
            raise ShareRefusedError(
                f"principal {principal!r} already has {WAITING_MAX} requests waiting for "
                f"their turn (past {BURST} in a row, each principal's go {RATE:g} a second "
                "while others are served): wait for their answers, then try again"
            )
        self._due[principal] = due + self._interval
        return max(wait, 0.0)

    async def wait(self, principal: str | None) -> None:
        """Wait until a request of ``principal`` is on pace.

        Raises:
            ShareRefusedError: ``principal`` already has :data:`WAITING_MAX` requests waiting.
        """
        wait = self.delay(principal)
        if wait <= 0 or principal is None:
            return
        self._waiting[principal] = self._waiting.get(principal, 0) + 1
        try:
            await asyncio.sleep(wait)
        finally:
            left = self._waiting[principal] - 1
            if left:
                self._waiting[principal] = left
            else:
                del self._waiting[principal]

    def _others_active(self, principal: str, now: float) -> bool:
        since = now - ACTIVE_SECONDS
        stale = [name for name, seen in self._seen.items() if seen < since]
        for name in stale:  # long quiet: forgotten, so that the maps stay small
            del self._seen[name]
            if name not in self._waiting:
                self._due.pop(name, None)
        return any(name != principal for name in self._seen)


__all__ = ["ACTIVE_SECONDS", "BURST", "RATE", "WAITING_MAX", "Pacing"]
