"""Annotating a thought: a reviewer's label, score and note, recorded in the session's own log.

A component of :class:`thoughtledger.api.Ledger`, reached as ``ledger.annotations`` (and through
:meth:`thoughtledger.api.Ledger.annotate`). An annotation is a ``thought.annotated`` event appended
through the ordinary append path, so the hash chain, the Merkle tree, the held head and the
observers move as for any event; it never changes the line of reasoning.

Who may annotate: the ledger's own user (no principal) any session; an ``auditor`` any session it
may read (it still may not think in one); a ``writer`` its own sessions; a ``reader`` none. A
session the caller may not annotate is reported as missing, as every other refusal of a
principal is. Its note is redactable like a thought's text
(``ledger.redaction.redact(session_id, version=<the annotation's version>, ...)``).
"""

import math
import unicodedata
from collections.abc import Sequence
from typing import Protocol

from thoughtledger.api.access import Principal, allowed
from thoughtledger.api.errors import not_found
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import ConcurrencyError, InvalidInputError
from thoughtledger.ledger.events import (
    MAX_LABEL_CHARS,
    MAX_NOTE_CHARS,
    MAX_SCORE,
    LedgerEvent,
    SessionStarted,
    ThoughtAnnotated,
    ThoughtEvent,
)
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.projections.entries import Annotation, annotation_of

_ATTEMPTS = 8
MAX_BY_CHARS = 256
_NOTE_CONTROLS_ALLOWED = frozenset("\n\t")


class AnnotationLog(Protocol):
    """Where an annotation is appended: the ledger's recorder is one (named here, not imported)."""

    async def append_at(
        self, session_id: str, events: list[LedgerEvent], *, expected_version: int
    ) -> list[RecordedEvent]:
        """Append ``events`` to a session that must be at ``expected_version``."""


def may_annotate(principal: Principal | None, owner: str | None) -> bool:
    """Whether ``principal`` may annotate a session owned by ``owner`` (the access rule)."""
    return allowed(principal, "annotate", owner)


def check_label(label: object) -> str:
    """Return ``label`` if it can label an annotation.

    Raises:
        InvalidInputError: Not a string of 1 to 64 letters, digits and ``_.:/-``, beginning
            with a letter or digit.
    """
    if not isinstance(label, str) or not label:
        raise InvalidInputError("an annotation needs a non-empty label")
    if len(label) > MAX_LABEL_CHARS:
        raise InvalidInputError(
            f"a label has at most {MAX_LABEL_CHARS} characters, got {len(label)}"
        )
    if not (label[0].isalnum() or label[0] == "_") or not all(
        char.isalnum() or char in "_.:/-" for char in label
    ):
        raise InvalidInputError(
            f"a label holds letters, digits and _.:/- and begins with a letter or digit, "
            f"got {label!r:.80}"
        )
    return label


def _check_note(note: object) -> str:
    if note is None:
        return ""
    if not isinstance(note, str):
        raise InvalidInputError("a note is text")
    if len(note) > MAX_NOTE_CHARS:
        raise InvalidInputError(f"a note has at most {MAX_NOTE_CHARS} characters, got {len(note)}")
    if any(
        unicodedata.category(char).startswith("C") and char not in _NOTE_CONTROLS_ALLOWED
        for char in note
    ):
        # Notes are shown in terminals and pages: no escape sequences, no invalid Unicode.
        raise InvalidInputError("a note holds no control characters (but newlines and tabs)")
    return note


def _check_by(by: object) -> str | None:
    if by is None:
        return None
    if not isinstance(by, str) or not by.strip() or len(by) > MAX_BY_CHARS:
        raise InvalidInputError(f"an annotation's author is 1 to {MAX_BY_CHARS} characters")
    if any(unicodedata.category(char).startswith("C") for char in by):
        raise InvalidInputError("an annotation's author holds no control characters")
    return by


def _check_score(score: object) -> float | None:
    if score is None:
        return None
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise InvalidInputError(f"a score is a number, got {score!r:.40}")
    value = float(score)
    if not math.isfinite(value) or abs(value) > MAX_SCORE:
        raise InvalidInputError(f"a score is a finite number within ±{MAX_SCORE:g}, got {score}")
    return value


class Annotations:
    """A ledger's annotations: ``ledger.annotations.annotate(session_id, 3, label="wrong")``.

    Args:
        store: The log, read to find the session, its owner and the thought.
        log: Where the ``thought.annotated`` event is appended (the ledger's recorder, so that
            its held session and observers see it).
    """

    def __init__(self, store: EventStore, log: AnnotationLog) -> None:
        self._store = store
        self._log = log

    async def annotate(
        self,
        session_id: str,
        thought_number: int,
        *,
        label: str,
        note: str | None = None,
        score: float | None = None,
        by: str | None = None,
        principal: Principal | None = None,
    ) -> Annotation:
        """Record a reviewer's annotation of one thought of a session.

        Args:
            session_id: The session.
            thought_number: The thought's number (the session must hold a thought with it).
            label: A short name of the finding: 1-64 letters, digits and ``_.:/-``.
            note: Why, in free text (at most 10,000 characters; newlines allowed, no other
                control characters); redactable later.
            score: A finite number, when the reviewer gives one.
            by: Who annotates, recorded (the CLI passes the operating-system user); ignored
                when ``principal`` is given: a principal is recorded under its own name.
            principal: The caller, when authenticated (see :func:`may_annotate`); ``None``: the
                ledger's own user.

        Returns:
            The annotation as recorded (its ``version`` is the event's version in the session).

        Raises:
            InvalidInputError: A malformed id, label, note, score or author, or a thought the
                session does not have; nothing was written.
            SessionNotFoundError: No such session, or ``principal`` may not annotate it;
                nothing was written.
            ConcurrencyError: Other writers kept moving the session (nothing was written).
            StoreError: The store failed (or is read-only).
        """
        check_id(session_id)
        if isinstance(thought_number, bool) or not isinstance(thought_number, int):
            raise InvalidInputError("a thought number is a whole number >= 1")
        if thought_number < 1:
            raise InvalidInputError("a thought number is a whole number >= 1")
        event = ThoughtAnnotated(
            thought_number=thought_number,
            label=check_label(label),
            score=_check_score(score),
            by=_check_by(principal.name if principal is not None else by),
            note=_check_note(note),
        )
        for attempt in range(1, _ATTEMPTS + 1):
            stream = await self._store.read_stream(session_id)
            if not stream or not may_annotate(principal, _owner(stream)):
                raise not_found(session_id)
            if not any(_numbered(r.event, thought_number) for r in stream):
                raise InvalidInputError(f"session {session_id} has no thought {thought_number}")
            try:
                recorded = await self._log.append_at(
                    session_id, [event], expected_version=stream[-1].version
                )
            except ConcurrencyError:
                # Another writer moved the session since it was read: read it again.
                if attempt == _ATTEMPTS:
                    raise
                continue
            record = recorded[0]
            assert isinstance(record.event, ThoughtAnnotated)  # noqa: S101  # appended above
            return annotation_of(record, record.event)
        raise AssertionError("unreachable")  # pragma: no cover  # the loop returns or raises


def _owner(stream: Sequence[RecordedEvent]) -> str | None:
    event = stream[0].event
    return event.owner if isinstance(event, SessionStarted) else None


def _numbered(event: object, thought_number: int) -> bool:
    return isinstance(event, ThoughtEvent) and event.thought_number == thought_number


__all__ = ["AnnotationLog", "Annotations", "check_label", "may_annotate"]
