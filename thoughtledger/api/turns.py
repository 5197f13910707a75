"""Heavy reads take turns per principal, so one principal's flood cannot starve the others.

A search over a principal's own large sessions runs in the database (on SQLite, in a driver
thread), and a page of a long session is built in this process: a principal that sends many at
once, within its rights, would otherwise keep every core busy and hold back everyone else's
appends and reads. Each principal gets :data:`PER_PRINCIPAL` such reads in flight at once; the
rest wait their turn (its own requests wait, never another's). And a named principal's heavy
reads take at most :data:`SHARE` of the time: after one that took ``d`` seconds, its next one
starts ``d * (1 / SHARE - 1)`` seconds later at the earliest (at most :data:`PAUSE_MAX`), so
that a flood of them leaves the process, and the machine, room for everyone else. The ledger's
own user (no principal: a local caller, or a server run without authentication, where every
client is that user) gets :data:`UNNAMED` turns and no pause.
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

PER_PRINCIPAL = 1
"""Heavy reads one named principal may have in flight at once."""
UNNAMED = 4
"""Heavy reads the ledger's own user (no principal) may have in flight at once."""
SHARE = 0.5
"""The part of the time a named principal's heavy reads, back to back, may take."""
PAUSE_MAX = 2.0
"""The longest a named principal's next heavy read is held back (seconds)."""


class Turns:
    """Per-principal turns for one kind of heavy read (a part of the facade)."""

    def __init__(self) -> None:
        self._gates: dict[str | None, tuple[asyncio.Semaphore, list[int]]] = {}
        self._next: dict[str, float] = {}
        """When each named principal that just had a turn may start its next (loop time)."""

    @asynccontextmanager
    async def of(self, principal: str | None) -> AsyncIterator[None]:
        """Hold one of ``principal``'s turns while the block runs (waiting for it if need be)."""
        gate = self._gates.get(principal)
        if gate is None:
            limit = UNNAMED if principal is None else PER_PRINCIPAL
            gate = self._gates[principal] = (asyncio.Semaphore(limit), [0])
        semaphore, users = gate
        users[0] += 1
        try:
            async with semaphore:
                loop = asyncio.get_running_loop()
                if principal is not None:
                    # Its own pause after its last heavy read: the wait is its own.
                    pause = self._next.pop(principal, 0.0) - loop.time()
                    if pause > 0:
                        await asyncio.sleep(pause)
                started = loop.time()
                try:
                    yield
                finally:
                    if principal is not None:
                        now = loop.time()
                        took = now - started
                        self._next[principal] = now + min(took * (1 / SHARE - 1), PAUSE_MAX)
        finally:
            users[0] -= 1
            if not users[0]:  # nobody holds or waits: forget the principal
                del self._gates[principal]
                self._forget_past()

    def _forget_past(self) -> None:
        # Pauses already over hold nothing back: dropped, so that the map stays small.
        now = asyncio.get_running_loop().time()
        for name in [name for name, when in self._next.items() if when <= now]:
            del self._next[name]


__all__ = ["PAUSE_MAX", "PER_PRINCIPAL", "SHARE", "UNNAMED", "Turns"]
