"""Forking a session at any version: a new session that starts where its source was.

The fork's first event names its source, the version and the source's event hash there; its
state is the source's as of that version, read from the source itself, then its own thoughts.
Nothing is copied and the source is untouched.
"""

from collections.abc import Mapping

from thoughtledger.api.access import Guard
from thoughtledger.api.caches import Held
from thoughtledger.api.errors import not_found
from thoughtledger.api.recording import Recorder
from thoughtledger.ledger.chain import VerifyReport
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import SessionStarted
from thoughtledger.ledger.ids import check_id, new_session_id
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.projections.state import SessionState, fork_base


class Forking:
    """Starts forks over the ledger's store, its held sessions and its recorder.

    Args:
        store: The log.
        held: The sessions held in memory (a fork's state is built from its source's).
        recorder: Appends the fork's first event and remembers its head.
    """

    def __init__(self, store: EventStore, held: Held, recorder: Recorder) -> None:
        self._store = store
        self._held = held
        self._recorder = recorder

    async def fork(
        self,
        session_id: str,
        *,
        at_version: int | None,
        metadata: Mapping[str, str] | None,
        owner: str | None,
        may_read: Guard,
    ) -> SessionState:
        """Start a fork of ``session_id`` (see :meth:`thoughtledger.api.Ledger.fork`).

        ``owner`` is recorded as the fork's; ``may_read`` says whether the principal forking
        may read a source of a given owner (the access rules' answer, see
        :func:`~thoughtledger.api.access.guard`).

        Raises:
            InvalidInputError: A malformed id, or a version the source does not have.
            SessionNotFoundError: No such source, or ``may_read`` refuses it.
            StoreError: The store failed; nothing was appended.
        """
        source = check_id(session_id)
        if at_version is not None and (type(at_version) is not int or at_version < 1):
            raise InvalidInputError(f"a fork's version is a whole number from 1: {at_version!r}")
        head = await self._store.stream_head(source)
        if head is None:
            raise not_found(source)
        version = head.version if at_version is None else at_version
        if version > head.version:
            raise InvalidInputError(
                f"session {source!r} has {head.version} events: it cannot be forked at "
                f"version {version}"
            )
        base = await self._held.as_of(source, version)
        if not may_read(base.owner):
            raise not_found(source)  # a principal forks only what it may read
        (at,) = await self._store.read_stream(source, after_version=version - 1, to_version=version)
        started = SessionStarted(
            metadata=dict(metadata or {}),
            owner=owner,
            fork_of=source,
            fork_version=version,
            fork_hash=at.hash,
        )
        fork = fork_base(new_session_id(), base)
        await self._recorder.append(fork, [started])
        held = self._held.heads.get(fork.session_id)
        assert held is not None  # noqa: S101  # just appended and remembered
        return held

    async def check_link(self, report: VerifyReport) -> VerifyReport:
        """``report`` on a session's chain, failed when it is a fork its source no longer backs.

        A fork names the source's event hash at the fork point: the source must still hold an
        event there with that hash, else the fork's first event is named as the bad one.

        Raises:
            StoreError: The store failed.
        """
        if not report.ok:
            return report
        first = await self._store.read_stream(report.session_id, to_version=1)
        event = first[0].event if first else None
        if not isinstance(event, SessionStarted) or event.fork_of is None:
            return report
        version = event.fork_version
        assert version is not None  # noqa: S101  # the model requires all three
        there = await self._store.read_stream(
            event.fork_of, after_version=version - 1, to_version=version
        )
        if there and there[0].hash == event.fork_hash:
            return report
        found = f"hash {there[0].hash[:12]}..." if there else "no event"
        return VerifyReport(
            session_id=report.session_id,
            ok=False,
            checked=report.checked,
            first_bad_version=1,
            first_bad_event_id=str(first[0].event_id),
            first_bad_position=first[0].position,
            reason=(
                f"forked from {event.fork_of} at version {version} with hash "
                f"{event.fork_hash[:12] if event.fork_hash else ''}..., but the source has "
                f"{found} there"
            ),
        )


__all__ = ["Forking"]
