"""What a principal changes through its scope: thoughts, captures, forks, annotations, redactions.

Each write first asks the access rules whether the principal's role may act at all
(:class:`~thoughtledger.api.errors.AccessDeniedError` if not), then which session it may touch:
a session it may not change answers as one that does not exist.
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from thoughtledger.api.capture import CapturedSpan, CaptureReport, group_by_session
from thoughtledger.api.recording import ThinkOutcome
from thoughtledger.api.redaction import RedactionReport
from thoughtledger.api.scope_rules import ScopeRules
from thoughtledger.ledger.decide import Generated, ThinkCommand
from thoughtledger.projections.entries import Annotation

if TYPE_CHECKING:
    from thoughtledger.api.service import Ledger
    from thoughtledger.api.session import Session


class ScopedWrites:
    """The writes of a :class:`~thoughtledger.api.Scope`.

    Args:
        ledger: What is written.
        rules: The access rules applied to the scope's principal.
    """

    def __init__(self, ledger: "Ledger", rules: ScopeRules) -> None:
        self._ledger = ledger
        self._rules = rules

    async def think(
        self,
        session_id: str | None,
        arguments: Mapping[str, Any] | ThinkCommand,
        *,
        clear: bool = False,
        metadata: Mapping[str, str] | None = None,
        generated: Generated | None = None,
        new_run: bool = False,
    ) -> ThinkOutcome:
        """Record one thought as this principal, in an id :meth:`Scope.writable` gave.

        ``session_id`` ``None`` starts a new session. A session the principal may not write is
        answered as missing: the access rule for writing is applied again to the session as
        the append finds it, so one another principal starts meanwhile is refused too.

        Raises:
            AccessDeniedError: The principal's role records nothing.
            InvalidThoughtError: The arguments break a rule; nothing was appended.
            InvalidInputError: A malformed id; nothing was appended.
            StoreError: The store failed; nothing was appended.
        """
        self._rules.require("write", "record thoughts")
        return await self._ledger.think(
            session_id,
            arguments,
            clear=clear,
            metadata=metadata,
            generated=generated,
            owner=self._rules.owner,
            new_run=new_run,
        )

    async def think_batch(
        self,
        session_id: str | None,
        thoughts: Sequence[Mapping[str, Any] | ThinkCommand],
        *,
        metadata: Mapping[str, str] | None = None,
        new_run: bool = False,
    ) -> list[ThinkOutcome]:
        """Record several thoughts in one append, in an id :meth:`Scope.writable` gave.

        ``session_id`` ``None`` starts a new session; see ``Ledger.batches``.

        Raises:
            AccessDeniedError: The principal's role records nothing.
            InvalidBatchError: A thought breaks a rule; nothing was appended.
            InvalidInputError: A malformed id; nothing was appended.
            StoreError: The store failed; nothing was appended.
        """
        self._rules.require("write", "record thoughts")
        return await self._ledger.batches.think(
            session_id, thoughts, metadata=metadata, owner=self._rules.owner, new_run=new_run
        )

    async def capture(self, spans: Sequence[CapturedSpan]) -> CaptureReport:
        """Record captured reasoning as this principal: one session per conversation key.

        Each key is taken as :meth:`Scope.writable` takes a name, so another principal's
        conversation id never mixes into its session (see ``Ledger.capture``).

        Raises:
            AccessDeniedError: The principal's role records nothing; nothing was appended.
            ConcurrencyError: Other writers kept moving a session.
            StoreError: The store failed.
        """
        self._rules.require("write", "record thoughts")
        sessions: dict[str, list[CapturedSpan]] = {}
        for key, group in group_by_session(spans).items():
            sessions.setdefault(await self._rules.writable(key), []).extend(group)
        return await self._ledger.capture.record(sessions, owner=self._rules.owner)

    async def fork(
        self,
        name: str,
        *,
        at_version: int | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> "Session":
        """Start a session of this principal's own that continues ``name`` at a version.

        Raises:
            AccessDeniedError: The principal's role records nothing.
            SessionNotFoundError: No such source this principal may write.
            InvalidInputError: A malformed id or version; nothing was appended.
            StoreError: The store failed; nothing was appended.
        """
        self._rules.require("write", "fork sessions")
        source = await self._rules.find(name)
        return await self._ledger.fork(
            source, at_version=at_version, metadata=metadata, owner=self._rules.owner
        )

    async def annotate(
        self,
        name: str,
        thought_number: int,
        *,
        label: str,
        note: str | None = None,
        score: float | None = None,
        by: str | None = None,
    ) -> Annotation:
        """Annotate a thought of a session this principal may annotate.

        ``by`` is recorded only for the ledger's own user: a principal annotates under its name.

        Raises:
            AccessDeniedError: The principal's role annotates nothing.
            SessionNotFoundError: No such session this principal may annotate.
            InvalidInputError: A malformed argument or a thought the session does not have.
            ConcurrencyError: Other writers kept moving the session.
            StoreError: The store failed.
        """
        self._rules.require("annotate", "annotate thoughts")
        session_id = await self._rules.find(name)
        return await self._ledger.annotate(
            session_id,
            thought_number,
            label=label,
            note=note,
            score=score,
            by=self._rules.owner or by,
            principal=self._rules.principal,
        )

    async def redact(
        self,
        name: str,
        *,
        thought_number: int | None = None,
        version: int | None = None,
        reason: str,
        by: str,
    ) -> RedactionReport:
        """Remove the text of thoughts of a session this principal may redact.

        ``by`` is recorded only for the ledger's own user: a principal redacts under its name.

        Raises:
            AccessDeniedError: The principal's role redacts nothing.
            SessionNotFoundError: No such session this principal may redact.
            InvalidInputError: A malformed argument, or a thought or version the session does
                not have; nothing was written.
            IntegrityError: The session does not verify; nothing was written.
            ConcurrencyError: Other writers kept moving the session.
            StoreError: The store failed.
        """
        self._rules.require("redact", "redact thoughts")
        session_id = await self._rules.find(name)
        return await self._ledger.redaction.redact(
            session_id,
            thought_number=thought_number,
            version=version,
            reason=reason,
            by=self._rules.owner or by,
            principal=self._rules.principal,
        )


__all__ = ["ScopedWrites"]
