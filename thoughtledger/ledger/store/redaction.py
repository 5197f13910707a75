"""Removing a redacted thought's text from the log: the store capability that rewrites.

The only write that changes a stored row. A thought event of payload schema 2 keeps its text in
a content member its hash does not cover (see :mod:`thoughtledger.ledger.content`); removing that
member (stripping) leaves the committed form, so the row's hash, the chain, the Merkle tree and
every proof stay valid. A store strips an event only once a ``thought.redacted`` event of its
session names it (the facade appends that first, through the ordinary append), so the log never
holds a missing text without the event that explains it; stripping again is a no-op.

Which payloads to replace is decided here, the same for every backend (:func:`strippings`); each
backend replaces them in a module of its own (:mod:`thoughtledger.ledger.store.sqlite.redact`,
:mod:`thoughtledger.ledger.store.postgres.redact`, and the in-memory store's), each replacing a
payload only if it is still the one read (``WHERE payload =``).
"""

from abc import abstractmethod
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

from thoughtledger.ledger.content import strip
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import REDACTABLE_FROM, REDACTABLE_TYPES, ThoughtRedacted


class Redacted(NamedTuple):
    """A ``thought.redacted`` event, by its version and the version of the thought it names."""

    version: int
    names: int


@dataclass(frozen=True, slots=True)
class Stripping:
    """One payload to replace by its committed form.

    Attributes:
        position: The event's global position.
        old: The payload as read (replaced only if still stored as this).
        new: Its committed form (the payload without its content member).
    """

    position: int
    old: str
    new: str


@runtime_checkable
class Redacting(Protocol):
    """The store's removal of redacted texts (a store capability)."""

    @abstractmethod
    async def strip_content(
        self, session_id: str, versions: Collection[int], *, vacuum: bool = True
    ) -> int:
        """Remove the text of the session's events at ``versions``, each already redacted.

        Every event named must be a thought (or annotation) event of payload schema 2 or later,
        named by a
        ``thought.redacted`` event of the session (by version and event id). Events whose text
        is gone already are skipped. Where the backend keeps old row versions or freed pages,
        they are overwritten or vacuumed (``vacuum=False`` leaves PostgreSQL's ``VACUUM`` to the
        operator).

        Args:
            session_id: The session.
            versions: The versions of the events to strip.
            vacuum: Reclaim the old row versions now (PostgreSQL's ``VACUUM tl_events``).

        Returns:
            How many payloads were stripped by this call.

        Raises:
            InvalidInputError: A malformed session id, a version the session does not have, an
                event that cannot be redacted (not a thought, or written before payload schema
                2), or one no ``thought.redacted`` event names; nothing was changed.
            StoreError: The backend failed (or is read-only); nothing was changed.
        """

    @abstractmethod
    async def redactions(self, session_id: str) -> tuple[Redacted, ...]:
        """Return the session's ``thought.redacted`` events as (their version, the version named).

        In the order of the redaction events. The SQL backends answer from an index of those
        events (schema step 5) and read only the named version from each payload, so that a
        reader of one page of a long session (see :mod:`thoughtledger.api.history`) learns what is
        redacted without decoding a single event.

        Raises:
            InvalidInputError: A malformed session id.
            StoreError: The backend failed.
        """


class Strip(Protocol):
    """A backend's replacement of payloads (see :class:`LogRedaction`)."""

    def __call__(self, changes: Sequence[Stripping], *, vacuum: bool) -> Awaitable[int]:
        """Replace each payload still stored as ``old`` by ``new``, atomically; return how many.

        Raises:
            StoreError: The backend failed (or is read-only); nothing was changed.
        """
        ...


class LogRedaction(Redacting):
    """A store's :class:`Redacting` (its ``redaction``): the shared rules over its log.

    The backend gives its own way of replacing payloads and of finding a session's redactions.

    Args:
        read_stream: Reads a whole session (the store's ``read_stream``).
        strip: Replaces the payloads the rules chose.
        redactions: Reads a session's redactions from an index; ``None``: from the decoded
            session (:func:`redactions_in`).
    """

    def __init__(
        self,
        read_stream: Callable[[str], Awaitable[Sequence[RecordedEvent]]],
        strip: Strip,
        redactions: Callable[[str], Awaitable[tuple[Redacted, ...]]] | None = None,
    ) -> None:
        self._read_stream = read_stream
        self._strip = strip
        self._redactions = redactions

    async def strip_content(
        self, session_id: str, versions: Collection[int], *, vacuum: bool = True
    ) -> int:
        """See :meth:`Redacting.strip_content`."""
        changes = strippings(session_id, await self._read_stream(session_id), versions)
        return await self._strip(changes, vacuum=vacuum) if changes else 0

    async def redactions(self, session_id: str) -> tuple[Redacted, ...]:
        """See :meth:`Redacting.redactions`."""
        if self._redactions is None:
            return redactions_in(await self._read_stream(session_id))
        return await self._redactions(session_id)


def strippings(
    session_id: str, stream: Sequence[RecordedEvent], versions: Collection[int]
) -> list[Stripping]:
    """Return what stripping the session's ``versions`` changes, given its whole ``stream``.

    The rules of :meth:`Redacting.strip_content`, checked before anything is changed; events
    whose text is gone already need no change.

    Raises:
        InvalidInputError: A version the stream does not have, an event that cannot be
            redacted, or one no ``thought.redacted`` event of the stream names.
    """
    named = {
        (record.event.version, record.event.event_id)
        for record in stream
        if isinstance(record.event, ThoughtRedacted)
    }
    changes: list[Stripping] = []
    for version in sorted(set(versions)):
        if not 1 <= version <= len(stream):
            raise InvalidInputError(f"session {session_id!r} has no version {version}")
        record = stream[version - 1]
        where = f"session {session_id!r} version {version}"
        if record.event_type not in REDACTABLE_TYPES or record.schema_version < REDACTABLE_FROM:
            raise InvalidInputError(f"{where} is not a redactable thought event (or annotation)")
        if (version, str(record.event_id)) not in named:
            raise InvalidInputError(
                f"{where}: no thought.redacted event names it; record the redaction first"
            )
        stripped = strip(record.payload)
        if stripped != record.payload:
            changes.append(Stripping(record.position, record.payload, stripped))
    return changes


def redactions_in(stream: Iterable[RecordedEvent]) -> tuple[Redacted, ...]:
    """Return the ``thought.redacted`` events of a session's decoded ``stream`` (see above)."""
    return tuple(
        Redacted(record.version, record.event.version)
        for record in stream
        if isinstance(record.event, ThoughtRedacted)
    )


__all__ = [
    "LogRedaction",
    "Redacted",
    "Redacting",
    "Strip",
    "Stripping",
    "redactions_in",
    "strippings",
]
