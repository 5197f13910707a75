"""Redaction: removing thoughts' text from the log while every chain, tree and proof still verifies.

A component of :class:`thoughtledger.api.Ledger`, reached as ``ledger.redaction``. A thought event
written in payload schema 2 keeps its text (and guidance) in a content member its hash covers only
through a salted digest (see :mod:`thoughtledger.ledger.content`). Redacting it is two steps, in
this order:

1. append a ``thought.redacted`` event per thought (who, why, which event) through the ordinary
   append path: the chain, the Merkle tree and the session head move as for any event;
2. strip the content member from each named event's stored payload
   (:meth:`~thoughtledger.ledger.store.redaction.Redacting.strip_content`).

A crash between the two leaves the text with its redaction recorded (the ledger still verifies);
redacting again completes the strip without a second event. The text is never missing without
the event that explains it. Events written before payload schema 2 cannot be redacted.
"""

import getpass
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from thoughtledger.api.access import Principal, allowed
from thoughtledger.api.errors import not_found
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import ConcurrencyError, IntegrityError, InvalidInputError
from thoughtledger.ledger.events import (
    MAX_REASON_CHARS,
    REDACTABLE_FROM,
    SessionStarted,
    ThoughtAnnotated,
    ThoughtEvent,
    ThoughtRedacted,
)
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import MAX_BATCH, EventStore
from thoughtledger.ledger.store.redaction import Redacting

MAX_BY_CHARS = 256
"""The longest name a redaction records as its author."""

_ATTEMPTS = 8


@dataclass(frozen=True, slots=True)
class RedactedThought:
    """One thought event a redaction covers.

    Attributes:
        version: The event's version in the session.
        thought_number: The thought's number.
        event_id: The event's id.
    """

    version: int
    thought_number: int
    event_id: str


@dataclass(frozen=True, slots=True)
class RedactionReport:
    """What a redaction did.

    Attributes:
        session_id: The session.
        redacted: The thought events whose text is now gone (or was already), in version order.
        recorded: How many ``thought.redacted`` events this call appended (0 when every one was
            recorded before: a second run only completes the strip), in appends of at most
            :data:`~thoughtledger.ledger.store.base.MAX_BATCH`.
        stripped: How many stored texts this call removed.
        refused: Thought events the selection named that were written before redactable events
            existed (payload schema 1): left as they are.
    """

    session_id: str
    redacted: tuple[RedactedThought, ...]
    recorded: int
    stripped: int
    refused: tuple[RedactedThought, ...] = ()


def default_author() -> str:
    """The operating-system user, as the CLI records who redacted (``unknown`` if none)."""
    try:
        return getpass.getuser() or "unknown"
    except (OSError, KeyError):  # no user name in the environment or the password database
        return "unknown"


class RedactionLog(Protocol):
    """Where a redaction records its events: :class:`thoughtledger.api.Ledger` is one.

    Named here, so that redaction does not import the facade that makes it.
    """

    async def append_redactions(
        self, session_id: str, redactions: Sequence[ThoughtRedacted], *, expected_version: int
    ) -> list[RecordedEvent]:
        """See :meth:`thoughtledger.api.Ledger.append_redactions`."""


class Redaction:
    """A ledger's redaction: ``ledger.redaction.redact(session_id, reason=..., by=...)``.

    Args:
        store: The log: read to choose and verify.
        stripping: Removes the redacted thoughts' texts from the log's rows.
        log: Where the ``thought.redacted`` events are appended, through the ordinary append
            path (the ledger, so that its held sessions and observers see them).
    """

    def __init__(self, store: EventStore, stripping: Redacting, log: RedactionLog) -> None:
        self._store = store
        self._stripping = stripping
        self._log = log

    async def redact(
        self,
        session_id: str,
        *,
        thought_number: int | None = None,
        version: int | None = None,
        reason: str,
        by: str,
        principal: Principal | None = None,
        vacuum: bool = True,
    ) -> RedactionReport:
        """Remove the text of a session's thoughts, recording who did it and why.

        With neither ``thought_number`` nor ``version``, every thought of the session (and every
        annotation's note); with ``thought_number``, every event carrying that number (main
        line, branches and the notes on them); with ``version``, that one event (a thought, or
        an annotation whose note goes). Safe to run again: what was done is not done twice.

        Args:
            session_id: The session.
            thought_number: Only the thoughts with this number.
            version: Only the thought event at this version.
            reason: Why (recorded; required, at most :data:`MAX_REASON_CHARS` characters).
            by: Who (recorded): the operating-system user, or a principal's name.
            principal: The caller, when authenticated: a writer redacts its own sessions, an
                auditor any (the access door's ``redact``); ``None``: the ledger's own user.
            vacuum: On PostgreSQL, reclaim the old row versions now (``VACUUM tl_events``).

        Returns:
            What was redacted, recorded and stripped, and what was refused.

        Raises:
            InvalidInputError: A malformed id, reason or author, both selectors, a thought or
                version the session does not have, or a selection holding only events written
                before redactable events existed; nothing was written.
            SessionNotFoundError: No such session (or ``principal`` may not redact it); nothing
                was written.
            IntegrityError: The session does not verify; nothing was written.
            ConcurrencyError: Other writers kept moving the session while it was redacted
                (what was recorded stays recorded; running it again completes it).
            StoreError: The store failed (or is read-only).
        """
        check_id(session_id)
        reason, by = _text("reason", reason, MAX_REASON_CHARS), _text("by", by, MAX_BY_CHARS)
        if thought_number is not None and version is not None:
            raise InvalidInputError("give a thought number or a version, not both")
        for name, value in (("thought number", thought_number), ("version", version)):
            if value is not None and (isinstance(value, bool) or value < 1):
                raise InvalidInputError(f"the {name} must be a whole number >= 1")
        conflicts = recorded = 0
        while True:
            stream = await self._store.read_stream(session_id)
            if not stream:
                raise not_found(session_id)
            if not allowed(principal, "redact", _owner(stream)):
                raise not_found(session_id)
            chosen = _chosen(session_id, stream, thought_number, version)
            report = await self._store.verify(session_id)
            if not report.ok:
                raise IntegrityError(
                    f"session {session_id} does not verify (version {report.first_bad_version}: "
                    f"{report.reason}); nothing was redacted"
                )
            refused = tuple(_item(r) for r in chosen if r.schema_version < REDACTABLE_FROM)
            targets = [r for r in chosen if r.schema_version >= REDACTABLE_FROM]
            if not targets:
                raise InvalidInputError(
                    f"{_what(thought_number, version)} of session {session_id} "
                    f"{'was' if len(chosen) == 1 else 'were'} written before redactable events "
                    "existed (payload schema 1) and cannot be redacted; nothing was written"
                )
            named = {
                (r.event.version, r.event.event_id)
                for r in stream
                if isinstance(r.event, ThoughtRedacted)
            }
            events = [
                ThoughtRedacted(
                    event_id=str(r.event_id),
                    version=r.version,
                    thought_number=_number(r),
                    by=by,
                    reason=reason,
                )
                for r in targets
                if (r.version, str(r.event_id)) not in named
            ]
            if events:
                # A long session's redactions go in several appends, each at most the most an
                # append carries; the next round reads them back as already recorded.
                batch = events[:MAX_BATCH]
                try:
                    await self._log.append_redactions(
                        session_id, batch, expected_version=stream[-1].version
                    )
                except ConcurrencyError:
                    # Another writer moved the session since it was read: read it again.
                    conflicts += 1
                    if conflicts >= _ATTEMPTS:
                        raise
                    continue
                recorded += len(batch)
                if len(events) > len(batch):
                    continue
            stripped = await self._stripping.strip_content(
                session_id, [r.version for r in targets], vacuum=vacuum
            )
            return RedactionReport(
                session_id, tuple(_item(r) for r in targets), recorded, stripped, refused
            )


def _text(name: str, value: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"a redaction needs a non-empty {name}")
    if len(value) > limit:
        raise InvalidInputError(f"the {name} is {len(value)} characters, over the limit of {limit}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"the {name} is not valid Unicode") from exc
    return value


def _owner(stream: Sequence[RecordedEvent]) -> str | None:
    event = stream[0].event
    return event.owner if isinstance(event, SessionStarted) else None


def _number(record: RecordedEvent) -> int:
    event = record.event
    # chosen among thought and annotation events only
    assert isinstance(event, ThoughtEvent | ThoughtAnnotated)  # noqa: S101
    return event.thought_number


def _item(record: RecordedEvent) -> RedactedThought:
    return RedactedThought(record.version, _number(record), str(record.event_id))


def _what(thought_number: int | None, version: int | None) -> str:
    if thought_number is not None:
        return f"thought {thought_number}"
    if version is not None:
        return f"version {version}"
    return "every thought"


def _chosen(
    session_id: str,
    stream: Sequence[RecordedEvent],
    thought_number: int | None,
    version: int | None,
) -> list[RecordedEvent]:
    """The thought events a selection names, with the annotations whose notes go with them.

    An annotation's note is text a person wrote about a thought: a version names one
    annotation as it names one thought; a thought number takes the notes on that thought with
    it, and the whole session every note.

    Raises:
        InvalidInputError: The session has no such thought, version, or no thought at all.
    """
    texts = [r for r in stream if isinstance(r.event, ThoughtEvent | ThoughtAnnotated)]
    thoughts = [r for r in texts if isinstance(r.event, ThoughtEvent)]
    if version is not None:
        chosen = [r for r in texts if r.version == version]
        if not chosen:
            raise InvalidInputError(
                f"session {session_id} has no thought at version {version} (nor an annotation)"
            )
        return chosen
    if thought_number is not None:
        if not any(_number(r) == thought_number for r in thoughts):
            raise InvalidInputError(f"session {session_id} has no thought {thought_number}")
        return [r for r in texts if _number(r) == thought_number]
    if not thoughts:
        raise InvalidInputError(f"session {session_id} has no thought to redact")
    return texts


__all__ = [
    "MAX_BY_CHARS",
    "RedactedThought",
    "Redaction",
    "RedactionLog",
    "RedactionReport",
    "default_author",
]
