"""Several thoughts recorded at once: every one validated first, then all in one append.

``ledger.batches`` (a part of :class:`thoughtledger.api.Ledger`). A batch is what the same
thoughts sent one call each would record, in one store transaction instead of one each: the same
events in the same order, and one :class:`~thoughtledger.api.facade.recording.ThinkOutcome` per
thought equal to what its own call would have returned (each answer is read from the session as
the thoughts before it left it). A thought that breaks a rule refuses the whole batch, naming
its index, before anything is read or written.

The batch goes to one session, so the switches one call each could make between sessions happen
only before its first thought: an expired or cleared session is retired and the batch starts a
new one, as its first thought alone would. With ``new_run`` (a connection's own session, one
session per run), a later thought that would start a new run is refused instead of splitting
the batch.
"""

import asyncio
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from thoughtledger.api.facade.caches import Held
from thoughtledger.api.facade.errors import not_found
from thoughtledger.api.facade.recording import Recorder, ThinkOutcome
from thoughtledger.ledger.decide import ThinkCommand, parse_command, starts_a_run
from thoughtledger.ledger.decide_batch import MAX_BATCH_THOUGHTS, decide_batch
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import (
    ConcurrencyError,
    InvalidBatchError,
    InvalidInputError,
    InvalidThoughtError,
)
from thoughtledger.ledger.events import LedgerEvent
from thoughtledger.ledger.ids import check_id, new_session_id
from thoughtledger.projections.state import SessionState, empty, replay

_ATTEMPTS = 32
"""Times a batch is decided again after a conflict before the conflict is raised (as a thought)."""

NEW_RUN_IN_BATCH = (
    "starts a new run (a plain thought numbered 1 after other thoughts): send it as the first "
    "thought of a batch of its own"
)
"""Why a later thought of a batch that records one session per run is refused."""


def check_batch(
    items: Sequence[Any], validate: Callable[[Any], ThinkCommand]
) -> list[ThinkCommand]:
    """Validate every item of a batch with ``validate``, each as one call would be validated.

    Args:
        items: The batch's thoughts, in any form ``validate`` takes.
        validate: One way in's validation of one thought (it raises ``InvalidThoughtError``).

    Returns:
        The commands, in order.

    Raises:
        InvalidInputError: ``items`` is not a list of 1 to :data:`MAX_BATCH_THOUGHTS` items.
        InvalidBatchError: An item is refused (the first one, by its index).
    """
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence):
        raise InvalidInputError("a batch is a list of thoughts")
    if not 1 <= len(items) <= MAX_BATCH_THOUGHTS:
        raise InvalidInputError(
            f"a batch holds 1 to {MAX_BATCH_THOUGHTS} thoughts, got {len(items)}; "
            "split it into several batches"
        )
    commands: list[ThinkCommand] = []
    for index, item in enumerate(items):
        try:
            commands.append(validate(item))
        except InvalidThoughtError as exc:
            raise InvalidBatchError(index, str(exc)) from None
    return commands


class Batches:
    """Records batches of thoughts: reached as ``ledger.batches``.

    Args:
        held: The sessions the ledger holds (a batch moves the session's head once).
        recorder: The ledger's recorder (retirements, and the one append every event takes).
        max_thought_bytes: Reads the ledger's largest accepted thought, in UTF-8 bytes.
    """

    def __init__(
        self, held: Held, recorder: Recorder, max_thought_bytes: Callable[[], int]
    ) -> None:
        self._held = held
        self._recorder = recorder
        self._max_thought_bytes = max_thought_bytes

    def commands(self, thoughts: Sequence[Mapping[str, Any] | ThinkCommand]) -> list[ThinkCommand]:
        """Validate a batch of thoughts (snake_case mappings or commands) as :meth:`think` does.

        Raises:
            InvalidInputError: Not a list of 1 to :data:`MAX_BATCH_THOUGHTS` thoughts.
            InvalidBatchError: A thought breaks a rule (the first, by its index).
        """
        limit = self._max_thought_bytes()

        def validate(item: object) -> ThinkCommand:
            if isinstance(item, ThinkCommand):
                return item
            if not isinstance(item, Mapping):
                raise InvalidThoughtError(
                    f"invalid thought: a thought is a mapping of its fields, "
                    f"got {type(item).__name__}"
                )
            given = {key: value for key, value in item.items() if value is not None}
            return parse_command(given, max_thought_bytes=limit)

        return check_batch(thoughts, validate)

    async def think(
        self,
        session_id: str | None,
        thoughts: Sequence[Mapping[str, Any] | ThinkCommand],
        *,
        metadata: Mapping[str, str] | None = None,
        owner: str | None = None,
        new_run: bool = False,
    ) -> list[ThinkOutcome]:
        """Record several thoughts in one append; one outcome per thought, as one call each.

        Args:
            session_id: The session to continue; ``None`` starts a new one.
            thoughts: The thoughts in order: mappings of their fields (snake_case, ``None``
                meaning not given) or validated commands; 1 to :data:`MAX_BATCH_THOUGHTS`.
            metadata: Facts to record if the batch starts a session.
            owner: The principal recording (see :meth:`thoughtledger.api.Ledger.think`).
            new_run: As :meth:`thoughtledger.api.Ledger.think`'s, for the first thought; a later
                thought that would start a new run refuses the batch.

        Returns:
            Each thought's outcome: its session (the same for all), the session after it, its
            entry and its events (the first also carries a retired session's last event).

        Raises:
            InvalidInputError: A malformed session id, or not a list of 1 to
                :data:`MAX_BATCH_THOUGHTS` thoughts; nothing was appended.
            InvalidBatchError: A thought breaks a rule (named by its index); nothing was
                appended.
            SessionNotFoundError: ``owner`` does not own the session; nothing was appended.
            ConcurrencyError: Other writers kept moving the session; nothing was appended.
            StoreError: The store failed; nothing of the batch was appended.
        """
        commands = self.commands(thoughts)
        if new_run:
            for index, command in enumerate(commands[1:], start=1):
                if starts_a_run(command):
                    raise InvalidBatchError(index, NEW_RUN_IN_BATCH)
        current = check_id(session_id) if session_id is not None else new_session_id()
        retired: list[RecordedEvent] = []
        replaced: str | None = None
        fresh = False
        conflict: ConcurrencyError | None = None
        for attempt in range(_ATTEMPTS):
            state = await self._held.load(current, fresh=fresh)
            if owner is not None and state.version and state.owner != owner:
                raise not_found(current)
            retire = self._recorder.retirement(state)
            try:
                if retire is not None:
                    retired += await self._recorder.append(state, [retire])
                if state.version and (
                    retire is not None
                    or state.ended is not None
                    or (new_run and state.thought_count and starts_a_run(commands[0]))
                ):
                    replaced, current = current, new_session_id()
                    state = empty(current)
                decided = decide_batch(
                    commands,
                    version=state.version,
                    known_branches=state.branches.keys(),
                    metadata=metadata,
                    predecessor_id=replaced,
                    owner=owner,
                )
                stored = await self._recorder.append(state, _flat(decided))
            except ConcurrencyError as exc:
                # As for one thought: reload, decide again, after a short random pause.
                fresh, conflict = True, exc
                await asyncio.sleep(random.random() * min(0.05, 0.001 * 2**attempt))  # noqa: S311
                continue
            return self._outcomes(state, decided, stored, retired, replaced)
        assert conflict is not None  # noqa: S101  # the loop only ends early on success
        raise conflict

    def _outcomes(
        self,
        state: SessionState,
        decided: list[list[LedgerEvent]],
        stored: list[RecordedEvent],
        retired: list[RecordedEvent],
        replaced: str | None,
    ) -> list[ThinkOutcome]:
        """Each thought's outcome, folded as one call each folds (and holds) the session."""
        heads = self._held.heads
        outcomes: list[ThinkOutcome] = []
        offset = 0
        for events in decided:
            own = stored[offset : offset + len(events)]
            offset += len(events)
            # One call each holds the session trimmed after each thought: the same here, so
            # that every answer, and the head the next call extends, is the one it would be.
            state = heads.bounded(replay(own, state))
            assert state.last is not None  # noqa: S101  # a thought was just folded in
            first = not outcomes
            outcomes.append(
                ThinkOutcome(
                    state.session_id,
                    state,
                    state.last,
                    [*retired, *own] if first else own,
                    replaced if first else None,
                )
            )
        heads.remember(state)
        return outcomes


def _flat(decided: list[list[LedgerEvent]]) -> list[LedgerEvent]:
    return [event for events in decided for event in events]


__all__ = ["NEW_RUN_IN_BATCH", "Batches", "check_batch"]
