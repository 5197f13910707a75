"""Several thoughts recorded at once: every one validated first, then all in one append.

``ledger.batches`` (a part of :class:`thoughtledger.api.Ledger`). A batch is what the same
thoughts sent one call each would record, in one store transaction instead of one each: the same
events in the same order, and one :class:`~thoughtledger.api.recording.ThinkOutcome` per
thought equal to what its own call would have returned (each answer is read from the session as
the thoughts before it left it). A thought that breaks a rule refuses the whole batch, naming
its index, before anything is read or written.

The batch goes to one session, so the switches one call each could make between sessions happen
only before its first thought: an expired or cleared session is retired and the batch starts a
new one, as its first thought alone would. With ``new_run`` (a connection's own session, one
session per run), a later thought that would start a new run is refused instead of splitting
the batch.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from thoughtledger.api.access import owner_guard
from thoughtledger.api.caches import Held
from thoughtledger.api.recording import Appended, Recorder, ThinkOutcome
from thoughtledger.ledger.decide import ThinkCommand, parse_command, starts_a_run
from thoughtledger.ledger.decide_batch import MAX_BATCH_THOUGHTS, decide_batch
from thoughtledger.ledger.errors import InvalidBatchError, InvalidInputError, InvalidThoughtError
from thoughtledger.ledger.events import LedgerEvent
from thoughtledger.ledger.ids import check_id
from thoughtledger.projections.state import SessionState, replay

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
        recorder: The ledger's recorder (the one decide-and-append loop every thought takes).
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
        current = check_id(session_id) if session_id is not None else None

        def decide(state: SessionState, predecessor_id: str | None) -> list[list[LedgerEvent]]:
            return decide_batch(
                commands,
                version=state.version,
                known_branches=state.branches.keys(),
                metadata=metadata,
                predecessor_id=predecessor_id,
                owner=owner,
            )

        appended = await self._recorder.record(
            current,
            decide,
            clear=False,
            may_change=owner_guard(owner, "write"),
            starts_run=new_run and starts_a_run(commands[0]),
        )
        return self._outcomes(appended)

    def _outcomes(self, appended: Appended) -> list[ThinkOutcome]:
        """Each thought's outcome, folded as one call each folds (and holds) the session."""
        heads = self._held.heads
        state = appended.before
        outcomes: list[ThinkOutcome] = []
        offset = 0
        for events in appended.decided:
            own = appended.stored[offset : offset + len(events)]
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
                    [*appended.retired, *own] if first else own,
                    appended.replaced if first else None,
                )
            )
        heads.remember(state)
        return outcomes


__all__ = ["NEW_RUN_IN_BATCH", "Batches", "check_batch"]
