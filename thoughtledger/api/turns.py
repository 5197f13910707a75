"""Heavy reads take turns per principal, so one principal's flood cannot starve the others.

A search over a principal's own large sessions runs in the database (on SQLite, in a driver
thread): a principal that sends many at once, within its rights, would otherwise keep every
core busy and hold back everyone else's appends and reads. Each principal gets
:data:`PER_PRINCIPAL` such reads in flight at once; the rest wait their turn (its own requests
wait, never another's). The ledger's own user (no principal: a local caller, or a server run
without authentication, where every client is that user) gets :data:`UNNAMED`.
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

PER_PRINCIPAL = 1
"""Heavy reads one named principal may have in flight at once."""
UNNAMED = 4
"""Heavy reads the ledger's own user (no principal) may have in flight at once."""


class Turns:
    """Per-principal turns for one kind of heavy read (a part of the facade)."""

    def __init__(self) -> None:
        self._gates: dict[str | None, tuple[asyncio.Semaphore, list[int]]] = {}

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
                yield
        finally:
            users[0] -= 1
            if not users[0]:  # nobody holds or waits: forget the principal
                del self._gates[principal]


__all__ = ["PER_PRINCIPAL", "UNNAMED", "Turns"]
