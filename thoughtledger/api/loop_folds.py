"""The loop fold of each session, kept between calls: what the marks' follower and readers share.

A session's marks after a version are found by folding its thoughts after that version through
the fold's window (:class:`~thoughtledger.projections.loops.LoopFinder`) as it stood there: the
latest :data:`~thoughtledger.projections.loops.LOOP_WINDOW` comparable thoughts before them.
:class:`SessionFolds` keeps, per recently folded session, the window at the last version it
folded and the marks it found since a base version, so that the follower and a reader folding the
same new thoughts fold them once, and a window is built from the log only for a session it holds
no window of (a few pages read backwards from that version).

A ``thought.redacted`` event changes the window of every thought after the one it names, so a
fold that meets one folds the whole session again, from its first thought, and says so
(:attr:`FoldedMarks.after_version` 0: every stored mark is replaced). A thought counts as
redacted when its payload says so or when a redaction of the session names it, whichever is
seen first (the text is stripped after the redaction is recorded): the fold depends on the log
alone, never on when it ran.
"""

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, cast

from thoughtledger.ledger.envelope import EventRow, LogRow, RecordedEvent
from thoughtledger.ledger.events import THOUGHT_TYPES, ThoughtEvent, ThoughtRedacted
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.ledger.store.loop_marks import FoldedMarks, LoopMark
from thoughtledger.projections.event_fields import event_fields
from thoughtledger.projections.loops import LOOP_WINDOW, LoopFinder

_BACK = 256
"""Events read per page while a window is built backwards from a version (doubled each page)."""


class Step(NamedTuple):
    """What the fold needs of one event of a session.

    Attributes:
        version: The event's version.
        number: A thought's number (0 for an event that carries none).
        text: A thought's text (``None``: not a thought).
        redacted: Whether the thought's stored text is redacted.
        names: For a ``thought.redacted`` event, the version it redacts (else 0).
    """

    version: int
    number: int
    text: str | None
    redacted: bool
    names: int


class KeptEvent(NamedTuple):
    """What the fold needs of an event this process appended, kept until the fold takes it in.

    Built of text and numbers only (no model), so that a few pages of them cost the cyclic
    garbage collector nothing (it stops tracking such tuples at its first look).
    """

    session_id: str
    version: int
    event_type: str
    payload: str
    step: Step


def kept_of(record: RecordedEvent) -> KeptEvent:
    """What :func:`steps_of_rows` needs of an appended event to fold its row without parsing."""
    return KeptEvent(
        record.session_id, record.version, record.event_type, record.payload, _step_of(record)
    )


def steps_of_rows(
    rows: Iterable[LogRow | EventRow], known: Mapping[int, KeptEvent] | None = None
) -> list[Step]:
    """The fold's view of stored rows (parsed, not decoded into models).

    Args:
        rows: The rows.
        known: Events this process appended, by position: a row whose stored columns are the
            ones such an event was appended with (same session, version, type and payload)
            is folded from the event, not parsed again (what the payload says is what the
            event held; a payload changed since, by a redaction, is parsed).

    Raises:
        EventDecodingError: A stored event cannot be read.
    """
    steps = []
    held = known or {}
    for row in rows:
        kind = row.event_type
        kept = held.get(row.position)
        if (
            kept is not None
            and kept.payload == row.payload
            and kept.session_id == row.session_id
            and kept.version == row.version
            and kept.event_type == kind
        ):
            steps.append(kept.step)
        elif kind in THOUGHT_TYPES:
            fields = event_fields(row)
            steps.append(
                Step(
                    row.version,
                    fields["thought_number"],
                    fields["thought"],
                    bool(fields.get("redacted")),
                    0,
                )
            )
        elif kind == "thought.redacted":
            steps.append(Step(row.version, 0, None, False, event_fields(row)["version"]))
        else:
            steps.append(Step(row.version, 0, None, False, 0))
    return steps


def steps_of_records(records: Iterable[RecordedEvent]) -> list[Step]:
    """The fold's view of decoded events."""
    return [_step_of(record) for record in records]


def _step_of(record: RecordedEvent) -> Step:
    event = record.event
    if record.event_type in THOUGHT_TYPES:
        thought = cast(ThoughtEvent, event)
        return Step(record.version, thought.thought_number, thought.thought, thought.redacted, 0)
    if isinstance(event, ThoughtRedacted):
        return Step(record.version, 0, None, False, event.version)
    return Step(record.version, 0, None, False, 0)


@dataclass(slots=True)
class _Fold:
    """One session's fold: its window at :attr:`version`, and the marks found after :attr:`base`.

    ``redacted_at``: the version of the latest redaction folded (its refold started at 0);
    ``named``: the thoughts the redactions folded so far name.
    """

    base: int
    version: int
    finder: LoopFinder
    found: list[LoopMark] = field(default_factory=list)
    redacted_at: int = 0
    named: set[int] = field(default_factory=set)


class SessionFolds:
    """Sessions' loop folds, kept between calls (least recently used go first).

    Args:
        store: The log, read for windows and for the events a caller did not pass.
        size: Sessions whose fold is kept.
    """

    def __init__(self, store: EventStore, *, size: int = 1024) -> None:
        self._store = store
        self._size = size
        self._folds: OrderedDict[str, _Fold] = OrderedDict()

    async def marks_after(
        self,
        session_id: str,
        after_version: int,
        to_version: int,
        steps: Sequence[Step] | None = None,
    ) -> FoldedMarks:
        """The session's marks of versions in ``(after_version, to_version]``.

        Args:
            session_id: The session.
            after_version: The version up to which the caller holds the marks already.
            to_version: The last version to fold (the session has at least this many events).
            steps: The session's events in ``(after_version, to_version]``, if the caller read
                them (else they are read from the log).

        Returns:
            The marks, with ``after_version`` 0 and every mark up to ``to_version`` when a
            redaction after ``after_version`` changed earlier windows.

        Raises:
            EventDecodingError: A stored event cannot be read.
            StoreError: The store failed.
        """
        fold = self._folds.pop(session_id, None)
        if fold is None or fold.base > after_version or fold.version < after_version:
            fold = await self._window(session_id, after_version)
        if to_version > fold.version:
            known = [s for s in steps or () if fold.version < s.version <= to_version]
            if not known or known[0].version != fold.version + 1 or known[-1].version < to_version:
                known = steps_of_records(
                    await self._store.read_stream(
                        session_id, after_version=fold.version, to_version=to_version
                    )
                )
            if any(step.names for step in known):
                fold = await self._whole(session_id, to_version)
            else:
                self._fold(fold, known)
        self._keep(session_id, fold)
        if fold.redacted_at > after_version:
            return FoldedMarks(
                session_id, 0, tuple(m for m in fold.found if m.version <= to_version)
            )
        return FoldedMarks(
            session_id,
            after_version,
            tuple(m for m in fold.found if after_version < m.version <= to_version),
        )

    def settled(self, session_id: str, version: int) -> None:
        """Drop the marks kept up to ``version``: they are stored (the fold's window stays)."""
        fold = self._folds.get(session_id)
        held = fold is not None and fold.base < version <= fold.version
        if fold is not None and held and fold.redacted_at <= version:
            fold.found = [mark for mark in fold.found if mark.version > version]
            fold.base = version

    def _keep(self, session_id: str, fold: _Fold) -> None:
        self._folds[session_id] = fold
        while len(self._folds) > self._size:
            self._folds.popitem(last=False)

    @staticmethod
    def _fold(fold: _Fold, steps: Iterable[Step]) -> None:
        finder, found, named = fold.finder, fold.found, fold.named
        for step in steps:
            if step.text is not None:
                repeat = finder.see(
                    step.version,
                    step.number,
                    step.text,
                    redacted=step.redacted or step.version in named,
                )
                if repeat is not None:
                    found.append(LoopMark(step.version, repeat.repeats_version, repeat.similarity))
            fold.version = step.version

    async def _window(self, session_id: str, version: int) -> _Fold:
        """The fold as it stood after ``version``: its latest comparable thoughts, from the log."""
        comparable: list[Step] = []
        named: set[int] = set()
        high, span = version, _BACK
        while high > 0 and len(comparable) < LOOP_WINDOW:
            low = max(0, high - span)
            page = steps_of_records(
                await self._store.read_stream(session_id, after_version=low, to_version=high)
            )
            # A redaction follows the thought it names: read backwards, it is met first.
            named.update(step.names for step in page if step.names)
            comparable[:0] = [
                s for s in page if s.text is not None and not s.redacted and s.version not in named
            ]
            high, span = low, span * 2
        finder = LoopFinder()
        for step in comparable[-LOOP_WINDOW:]:
            finder.see(step.version, step.number, step.text or "", redacted=False)
        return _Fold(base=version, version=version, finder=finder)

    async def _whole(self, session_id: str, version: int) -> _Fold:
        """The session folded from its first thought up to ``version`` (after a redaction)."""
        steps = steps_of_records(await self._store.read_stream(session_id, to_version=version))
        named = {step.names for step in steps if step.names}
        fold = _Fold(base=0, version=0, finder=LoopFinder(), named=named)
        self._fold(fold, steps)
        fold.redacted_at = max((step.version for step in steps if step.names), default=0)
        return fold


__all__ = ["KeptEvent", "SessionFolds", "Step", "kept_of", "steps_of_records", "steps_of_rows"]
