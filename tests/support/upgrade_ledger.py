"""The ledger an upgrade test keeps: two sessions (and a fork), a checkpoint, and a proof of it.

An upgrade must leave what was signed before it verifiable after it: each schema step's upgrade
test records this ledger, takes the database back to the step before, and opens it again.
"""

import json
from dataclasses import dataclass
from typing import Any

from tests.support.backends import settled
from tests.support.raw_store import raw_store
from thoughtledger.api import Ledger
from thoughtledger.ledger.checkpoint import Signer


def step(n: int, total: int = 4) -> dict[str, Any]:
    """Thought ``n`` of ``total``, as the API takes it."""
    return {
        "thought": f"weigh option {n} against the cache budget",
        "thought_number": n,
        "total_thoughts": total,
        "next_thought_needed": True,
    }


@dataclass(frozen=True)
class Proved:
    """What :func:`proved_ledger` recorded and signed.

    Attributes:
        first: A session of three thoughts.
        other: A session of one.
        fork: ``first``'s fork at version 2, if one was asked for.
        note: The signed checkpoint over every event.
        bundle: The proof of ``first``'s version 2 under it, as JSON.
    """

    first: str
    other: str
    fork: str | None
    note: str
    bundle: dict[str, Any]


async def proved_ledger(ledger: Ledger, signer: Signer, *, events: int, fork: bool) -> Proved:
    """Record the two sessions (and the fork), then sign a checkpoint and prove one thought.

    ``events`` is how many the ledger then holds: PostgreSQL's tree must see them all first.
    """
    first = (await ledger.think(None, step(1))).session_id
    for n in (2, 3):
        await ledger.think(first, step(n))
    other = (await ledger.think(None, step(1))).session_id
    forked = (await ledger.fork(first, at_version=2)).id if fork else None
    await settled(raw_store(ledger), events)
    note = await ledger.proofs.checkpoint(signer)
    bundle = json.loads(json.dumps(await ledger.proofs.prove(first, 2, note)))
    return Proved(first, other, forked, note, bundle)
