"""Pure rules of a batch: several thoughts decided in order, as one call each would decide them.

A batch is recorded in one append, so each thought is decided against the session as the thoughts
before it in the batch left it: its version (a session's first append also starts it) and the
branches known so far (a branch the batch opens is extended by a later thought of the batch).
"""

from collections.abc import Collection, Mapping, Sequence

from thoughtledger.ledger.decide import ThinkCommand, decide_thought
from thoughtledger.ledger.events import LedgerEvent

MAX_BATCH_THOUGHTS = 1_000
"""Most thoughts one batch may carry: every way in (Python, MCP, ``thoughtledger record``)
refuses a longer one. A thought is one event (a session's first append adds its start), so a
batch stays well under the store's :data:`~thoughtledger.ledger.store.checks.MAX_BATCH` events
per append, with room for events recorded beside each thought."""


def decide_batch(
    commands: Sequence[ThinkCommand],
    *,
    version: int,
    known_branches: Collection[str],
    metadata: Mapping[str, str] | None = None,
    predecessor_id: str | None = None,
    owner: str | None = None,
) -> list[list[LedgerEvent]]:
    """Return the events of each command, in order, for a session at ``version``.

    Each list is what :func:`~thoughtledger.ledger.decide.decide_thought` returns for that
    command on the session as the commands before it left it; concatenated, they are the one
    append that records the batch.

    Args:
        commands: The thoughts, validated, in the order they are recorded.
        version: The session's version before the batch (0: the batch starts it).
        known_branches: The branch ids the session already has.
        metadata: Facts recorded if the batch starts the session.
        predecessor_id: The session this one follows, if the batch starts it after another.
        owner: The principal recorded as the owner, if the batch starts the session.
    """
    known = set(known_branches)
    decided: list[list[LedgerEvent]] = []
    for command in commands:
        events = decide_thought(
            command,
            version=version,
            known_branches=known,
            metadata=metadata,
            predecessor_id=predecessor_id,
            owner=owner,
        )
        version += len(events)
        # What classify() registers as a branch, the fold then knows: the next thought may
        # extend it.
        if command.branch_from_thought is not None and command.branch_id:
            known.add(command.branch_id)
        decided.append(events)
    return decided


__all__ = ["MAX_BATCH_THOUGHTS", "decide_batch"]
