"""A handle on one session: record thoughts, read it back now or as it was, replay, clear."""

from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, Unpack, overload

from thoughtledger.api.batching import Batches
from thoughtledger.api.recording import ThinkOutcome
from thoughtledger.ledger.chain import VerifyReport
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError
from thoughtledger.ledger.thought_marks import MarkArguments, ThoughtArguments
from thoughtledger.projections.answers import (
    JsonDict,
    branch_sets,
    minimal_response,
    official_view,
    session_view,
    thought_history,
)
from thoughtledger.projections.state import SessionState

if TYPE_CHECKING:
    from thoughtledger.api.history import HistoryPage

Profile = Literal["minimal", "official", "full"]
"""The views a session reads as: the minimal response's, the official server's, or the session
pattern's in full (history and summary); the MCP server's ``--profile`` takes the same names."""


class SessionLedger(Protocol):
    """What a :class:`Session` needs of its ledger; :class:`thoughtledger.api.Ledger` provides it.

    Named here, so that the handle does not import the facade that makes it.
    """

    batches: Batches
    """See :attr:`thoughtledger.api.Ledger.batches`."""

    async def think(
        self,
        session_id: str | None,
        arguments: Mapping[str, Any],
        *,
        clear: bool = False,
        metadata: Mapping[str, str] | None = None,
    ) -> ThinkOutcome:
        """See :meth:`thoughtledger.api.Ledger.think`."""

    async def state(
        self,
        session_id: str,
        *,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> SessionState:
        """See :meth:`thoughtledger.api.Ledger.state`."""

    async def events(
        self,
        session_id: str,
        *,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> list[RecordedEvent]:
        """See :meth:`thoughtledger.api.Ledger.events`."""

    async def history(
        self,
        session_id: str,
        *,
        limit: int = ...,
        after: str | None = None,
        branch: str | None = None,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> "HistoryPage":
        """See :meth:`thoughtledger.api.Ledger.history`."""

    def replay(self, session_id: str) -> AsyncIterator[tuple[RecordedEvent, SessionState]]:
        """See :meth:`thoughtledger.api.Ledger.replay`."""

    async def clear_session(self, session_id: str, *, reason: str | None = None) -> bool:
        """See :meth:`thoughtledger.api.Ledger.clear_session`."""

    async def verify(self, session_id: str) -> VerifyReport:
        """See :meth:`thoughtledger.api.Ledger.verify`."""


class Session:
    """A handle on one session. After a clear or an expiry it follows the work to the new id."""

    def __init__(
        self, ledger: SessionLedger, session_id: str, metadata: Mapping[str, str] | None = None
    ) -> None:
        self._ledger = ledger
        self._id = session_id
        self._metadata = dict(metadata or {})

    @property
    def id(self) -> str:
        """The session id (it changes when a thought lands in a fresh session)."""
        return self._id

    async def process_sequential_thinking(
        self,
        thought: str,
        thought_number: int,
        total_thoughts: int,
        next_thought_needed: bool,
        **marks: Unpack[MarkArguments],
    ) -> JsonDict:
        """Record a thought and return the minimal response (the minimal-response spec).

        The answer has exactly ``thought, thoughtNumber, totalThoughts, nextThoughtNeeded``,
        whatever kind of thought it was. The marks are keyword arguments, each optional, typed
        by :class:`~thoughtledger.ledger.thought_marks.MarkArguments` (generated from the
        definition of a thought): a type checker or an editor names each one and refuses a
        misspelt one.

        Raises:
            InvalidThoughtError: (a ``ValueError``) the arguments break a rule, or name a mark
                a thought does not have; nothing appended.
            StoreError: The store failed; nothing appended.
        """
        outcome = await self.think(
            thought=thought,
            thought_number=thought_number,
            total_thoughts=total_thoughts,
            next_thought_needed=next_thought_needed,
            **marks,
        )
        return minimal_response(outcome.entry)

    async def process_batch(self, thoughts: Sequence[Mapping[str, Any]]) -> list[JsonDict]:
        """Record several thoughts in one append; answer each as one call each would answer.

        Each thought is a mapping of the keyword arguments :meth:`process_sequential_thinking`
        takes (``thought``, ``thought_number``, ``total_thoughts``, ``next_thought_needed`` and
        any marks; ``None`` means not given). Every one is validated first, as one call would
        validate it; then all are recorded in one store transaction, and the answers are those
        one call each would have given. A batch holds 1 to
        :data:`~thoughtledger.ledger.decide_batch.MAX_BATCH_THOUGHTS` thoughts.

        Raises:
            InvalidBatchError: (an ``InvalidThoughtError``) a thought breaks a rule; its
                ``index`` says which, the message which field; nothing was appended.
            InvalidInputError: Not a list of 1 to ``MAX_BATCH_THOUGHTS`` thoughts; nothing
                was appended.
            StoreError: The store failed; nothing was appended.
        """
        outcomes = await self.think_batch(thoughts)
        return [minimal_response(outcome.entry) for outcome in outcomes]

    async def think_batch(self, thoughts: Sequence[Mapping[str, Any]]) -> list[ThinkOutcome]:
        """Record several thoughts in one append; return each one's full outcome.

        See :meth:`process_batch` and :meth:`thoughtledger.api.batching.Batches.think`.

        Raises:
            InvalidBatchError: A thought breaks a rule (by its index); nothing was appended.
            InvalidInputError: Not a list of 1 to ``MAX_BATCH_THOUGHTS`` thoughts.
            StoreError: The store failed; nothing was appended.
        """
        outcomes = await self._ledger.batches.think(self._id, thoughts, metadata=self._metadata)
        self._id = outcomes[-1].session_id
        return outcomes

    async def think(
        self, *, clear: bool = False, **arguments: Unpack[ThoughtArguments]
    ) -> ThinkOutcome:
        """Record a thought given as keyword arguments (snake_case) and return the full outcome.

        The arguments are typed by :class:`~thoughtledger.ledger.thought_marks.ThoughtArguments`:
        the core fields required, the marks optional (``None``: not given).

        Raises:
            InvalidThoughtError: The arguments break a rule; nothing appended.
            StoreError: The store failed; nothing appended.
        """
        given = {key: value for key, value in arguments.items() if value is not None}
        outcome = await self._ledger.think(self._id, given, clear=clear, metadata=self._metadata)
        self._id = outcome.session_id
        return outcome

    async def state(
        self, *, as_of_version: int | None = None, as_of_time: datetime | None = None
    ) -> SessionState:
        """See :meth:`Ledger.state`."""
        return await self._ledger.state(
            self._id, as_of_version=as_of_version, as_of_time=as_of_time
        )

    async def view(
        self,
        profile: Profile | Literal["session"] = "full",
        *,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
        history_window: int | None = None,
    ) -> JsonDict:
        """Return the session as one of the views, now or as of a version or time.

        Args:
            profile: ``minimal`` (the minimal-response spec), ``official`` (the official server) or
                ``full`` (the session pattern; ``session``, its earlier name, still reads it).
            as_of_version: See :meth:`Ledger.state`.
            as_of_time: See :meth:`Ledger.state`.
            history_window: For ``full``: keep only the last N thoughts in the history.

        Raises:
            SessionNotFoundError: The session has no events (or none at that time).
            InvalidInputError: A malformed bound or profile.
        """
        state = await self.state(as_of_version=as_of_version, as_of_time=as_of_time)
        if profile == "official":
            return official_view(state)
        if profile in ("full", "session"):
            return session_view(state, history_window=history_window)
        if profile == "minimal":
            if state.last is None:
                raise SessionNotFoundError(f"session {self._id!r} has no thoughts yet")
            return minimal_response(state.last)
        raise InvalidInputError(f"unknown profile {profile!r}: use minimal, official or full")

    @overload
    async def history(
        self, *, as_of_version: int | None = None, as_of_time: datetime | None = None
    ) -> list[JsonDict]: ...

    @overload
    async def history(
        self,
        *,
        limit: int,
        after: str | None = None,
        branch: str | None = None,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> "HistoryPage": ...

    @overload
    async def history(
        self,
        *,
        after: str,
        limit: int | None = None,
        branch: str | None = None,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> "HistoryPage": ...

    async def history(
        self,
        *,
        limit: int | None = None,
        after: str | None = None,
        branch: str | None = None,
        as_of_version: int | None = None,
        as_of_time: datetime | None = None,
    ) -> "list[JsonDict] | HistoryPage":
        """Every thought with all its fields, now or as of a version or time; or one page of them.

        Without ``limit``, ``after`` or ``branch``: a list of every thought (the session is
        folded whole). With any of them: one :class:`~thoughtledger.api.history.HistoryPage`
        (see
        :meth:`Ledger.history`, whose default limit applies when only ``after`` is given); pass
        its ``next_cursor`` as ``after`` for the next page, while its ``more`` is true.

        Raises:
            SessionNotFoundError: The session has no events.
            InvalidInputError: A limit below 1, a bad cursor or an unknown branch (paged).
        """
        if limit is None and after is None and branch is None:
            return thought_history(
                await self.state(as_of_version=as_of_version, as_of_time=as_of_time)
            )
        paging: dict[str, Any] = {} if limit is None else {"limit": limit}
        return await self._ledger.history(
            self._id,
            after=after,
            branch=branch,
            as_of_version=as_of_version,
            as_of_time=as_of_time,
            **paging,
        )

    async def branches(
        self, *, as_of_version: int | None = None, as_of_time: datetime | None = None
    ) -> list[JsonDict]:
        """Every branch with its origin and thoughts, now or as of a version or time.

        Raises:
            SessionNotFoundError: The session has no events.
        """
        return branch_sets(await self.state(as_of_version=as_of_version, as_of_time=as_of_time))

    async def events(
        self, *, as_of_version: int | None = None, as_of_time: datetime | None = None
    ) -> list[RecordedEvent]:
        """See :meth:`Ledger.events`."""
        return await self._ledger.events(
            self._id, as_of_version=as_of_version, as_of_time=as_of_time
        )

    def replay(self) -> AsyncIterator[tuple[RecordedEvent, SessionState]]:
        """See :meth:`Ledger.replay`."""
        return self._ledger.replay(self._id)

    async def clear(self, *, reason: str | None = None) -> bool:
        """See :meth:`Ledger.clear_session`."""
        return await self._ledger.clear_session(self._id, reason=reason)

    async def verify(self) -> VerifyReport:
        """See :meth:`Ledger.verify`."""
        return await self._ledger.verify(self._id)


__all__ = ["Profile", "Session", "SessionLedger"]
