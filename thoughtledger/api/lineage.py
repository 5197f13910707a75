"""A session's lineage: the forks a caller may read, and a fork set beside its source.

A component of :class:`thoughtledger.api.Ledger`, reached as ``ledger.lineage`` (and through
:meth:`thoughtledger.api.Ledger.forks`). One rule decides which forks a caller sees, for every
way in (``show``, ``thinking_history``, the browser view): the ledger's own user (no principal)
and an auditor every fork; a reader or writer only the forks it owns, as for any session.

A comparison sets a fork beside its source from the fork point on: the thoughts both hold (the
source's up to the fork's version), then each side's own. The source is shown only to a caller
who may read it; otherwise the comparison says so and holds the fork's side alone.
"""

from dataclasses import dataclass
from datetime import datetime

from thoughtledger.api.access import Principal, allowed
from thoughtledger.api.caches import Held
from thoughtledger.api.errors import not_found
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import SessionStarted
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import EventStore, StreamHead
from thoughtledger.projections.entries import ForkPoint, ThoughtEntry, fork_point_of
from thoughtledger.projections.state import SessionState

COMPARE_THOUGHTS_MAX = 200
"""The most thoughts a comparison holds on each side (the counts are always whole)."""
COMPARE_EVENTS_MAX = 50_000
"""The longest session (in events) a comparison reads: each side is folded whole."""


@dataclass(frozen=True, slots=True)
class ForkEntry:
    """One fork of a session, as a listing shows it.

    Attributes:
        head: The fork's head (its id, version and times).
        version: The source's version it was forked at.
        agent: The agent recorded when it started, if any.
        owner: The principal that started it (``None``: the ledger's own user).
    """

    head: StreamHead
    version: int
    agent: str | None
    owner: str | None

    @property
    def session_id(self) -> str:
        """The fork's id."""
        return self.head.session_id

    @property
    def started_at(self) -> datetime:
        """When the fork was started."""
        return self.head.started_at


@dataclass(frozen=True, slots=True)
class ForkComparison:
    """A fork beside its source, from the fork point on.

    Attributes:
        fork_id: The fork.
        point: Its source, the source's version it starts from and the hash there.
        common: How many thoughts both hold (the source's up to ``point.version``).
        fork_thoughts: The fork's own thoughts, the first ``limit`` of them.
        fork_total: How many thoughts of its own the fork has.
        source_readable: Whether the caller may read the source; when not, the source's side
            is empty and its total ``None``.
        source_thoughts: The source's thoughts after ``point.version``, the first ``limit``.
        source_total: How many thoughts the source recorded after ``point.version``.
    """

    fork_id: str
    point: ForkPoint
    common: int
    fork_thoughts: tuple[ThoughtEntry, ...]
    fork_total: int
    source_readable: bool
    source_thoughts: tuple[ThoughtEntry, ...]
    source_total: int | None


class Lineage:
    """Forks and comparisons over the ledger's store and its held sessions.

    Args:
        store: The log.
        held: The sessions held in memory (a fork's state is built from its source's).
    """

    def __init__(self, store: EventStore, held: Held) -> None:
        self._store = store
        self._held = held

    async def forks(
        self, session_id: str, *, principal: Principal | None = None, limit: int | None = None
    ) -> list[ForkEntry]:
        """The forks of ``session_id`` that ``principal`` may read, oldest first.

        Args:
            session_id: The source.
            principal: Who asks (``None``: the ledger's own user, who sees every fork).
            limit: The most forks to return (``None``: all of them).

        Raises:
            InvalidInputError: The id is malformed, or a limit below 1.
            StoreError: The store failed.
        """
        if limit is not None and limit < 1:
            raise InvalidInputError(f"limit must be 1 or more, not {limit}")
        found: list[ForkEntry] = []
        for head in await self._store.fork_heads(check_id(session_id)):
            entry = await self._entry(head)
            if entry is None or not allowed(principal, "read", entry.owner):
                continue
            found.append(entry)
            if limit is not None and len(found) >= limit:
                break
        return found

    async def fork_point(self, session_id: str) -> ForkPoint | None:
        """Where the fork ``session_id`` starts from (``None`` for a session that is no fork).

        One read of the session's first event, which names its source: a long session is not
        folded to learn it (a page of its history reads this beside the page).

        Raises:
            InvalidInputError: The id is malformed.
            SessionNotFoundError: The session has no events.
            StoreError: The store failed.
        """
        records = await self._store.read_stream(check_id(session_id), after_version=0, to_version=1)
        if not records:
            raise not_found(session_id)
        started = records[0].event
        return fork_point_of(started) if isinstance(started, SessionStarted) else None

    async def compare(
        self,
        fork_id: str,
        *,
        principal: Principal | None = None,
        limit: int = COMPARE_THOUGHTS_MAX,
    ) -> ForkComparison:
        """Set the fork ``fork_id`` beside its source, from the fork point on.

        Args:
            fork_id: The fork.
            principal: Who asks: it must be allowed to read the fork; the source is shown only
                if it may read that too (``None``: the ledger's own user, who reads all).
            limit: The most thoughts to hold on each side (1 to
                :data:`COMPARE_THOUGHTS_MAX`).

        Raises:
            InvalidInputError: A malformed id or limit, a session that is no fork, or a side
                longer than :data:`COMPARE_EVENTS_MAX` events.
            SessionNotFoundError: No such session, or one ``principal`` may not read.
            StoreError: The store failed.
        """
        if not 1 <= limit <= COMPARE_THOUGHTS_MAX:
            raise InvalidInputError(
                f"limit must be between 1 and {COMPARE_THOUGHTS_MAX}, not {limit}"
            )
        check_id(fork_id)
        if not await self._may_read(principal, fork_id):
            raise not_found(fork_id)
        fork = await self._whole(fork_id)
        if fork.fork is None:
            raise InvalidInputError(
                f"session {fork_id!r} is no fork: only a fork is compared with its source"
            )
        point = fork.fork
        own = [entry for entry in fork.thoughts if entry.source is None]
        readable = await self._may_read(principal, point.session_id)
        after: list[ThoughtEntry] = []
        if readable:
            source = await self._whole(point.session_id)
            # The source's own thoughts past the fork point (a fork's inherited ones come first
            # and carry their own source's versions, all before it).
            after = [
                entry
                for entry in source.thoughts
                if entry.source is None and entry.version > point.version
            ]
        return ForkComparison(
            fork_id=fork_id,
            point=point,
            common=len(fork.thoughts) - len(own),
            fork_thoughts=tuple(own[:limit]),
            fork_total=len(own),
            source_readable=readable,
            source_thoughts=tuple(after[:limit]),
            source_total=len(after) if readable else None,
        )

    async def _entry(self, head: StreamHead) -> ForkEntry | None:
        first = await self._store.read_stream(head.session_id, to_version=1)
        event = first[0].event if first else None
        if not isinstance(event, SessionStarted) or event.fork_version is None:
            return None  # the index names only forks' first events: nothing else is listed
        return ForkEntry(head, event.fork_version, event.metadata.get("agent"), event.owner)

    async def _may_read(self, principal: Principal | None, session_id: str) -> bool:
        first = await self._store.read_stream(session_id, to_version=1)
        if not first:
            return False
        event = first[0].event
        owner = event.owner if isinstance(event, SessionStarted) else None
        return allowed(principal, "read", owner)

    async def _whole(self, session_id: str) -> SessionState:
        """The session's complete state, folded once from the log (a fork's source's included).

        One pass over each log, with nothing kept: what the held histories save on a second
        read would cost a first read twice the folding (see tools/bench_forks.py).
        """
        head = await self._store.stream_head(session_id)
        if head is None:
            raise not_found(session_id)
        if head.version > COMPARE_EVENTS_MAX:
            raise InvalidInputError(
                f"session {session_id!r} has {head.version:,} events: a comparison reads "
                f"sessions of up to {COMPARE_EVENTS_MAX:,}; read it page by page with "
                f"thoughtledger show {session_id} --limit 100"
            )
        return await self._held.as_of(session_id, head.version)


__all__ = ["COMPARE_EVENTS_MAX", "COMPARE_THOUGHTS_MAX", "ForkComparison", "ForkEntry", "Lineage"]
