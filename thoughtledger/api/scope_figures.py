"""Figures a principal reads through its scope: counted over the sessions it may read.

A principal that may not read every session gets figures over its own sessions only; the
figures of every model's usage are an auditor's (or the ledger's own user's).
"""

from datetime import datetime
from typing import TYPE_CHECKING

from thoughtledger.api.figures import LedgerStats
from thoughtledger.api.scope_rules import ScopeRules
from thoughtledger.projections.loop_counts import LoopStats
from thoughtledger.projections.usage import ModelUsage

if TYPE_CHECKING:
    from thoughtledger.api.service import Ledger


class ScopedFigures:
    """The figures of a :class:`~thoughtledger.api.Scope`.

    Args:
        ledger: What is counted.
        rules: The access rules applied to the scope's principal.
    """

    def __init__(self, ledger: "Ledger", rules: ScopeRules) -> None:
        self._ledger = ledger
        self._rules = rules

    async def figures(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
        client: str | None = None,
    ) -> LedgerStats:
        """Figures over the sessions this principal may read (see ``Ledger.stats``).

        Raises:
            InvalidInputError: A malformed filter.
            StoreError: The store failed.
        """
        return await self._ledger.stats.summarize(
            since=since, until=until, agent=agent, client=client, owner=self._rules.only_owner
        )

    async def loops(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
        client: str | None = None,
    ) -> LoopStats:
        """Loops over the sessions this principal may read (see ``Statistics.loops``).

        Raises:
            EventDecodingError: A stored event cannot be decoded.
            StoreError: The store failed.
        """
        return await self._ledger.stats.loops(
            since=since, until=until, agent=agent, client=client, owner=self._rules.only_owner
        )

    async def model_usage(
        self, *, since: datetime | None = None, until: datetime | None = None
    ) -> list[ModelUsage]:
        """Tokens, latency and cost per model, over every session: for who may read them all.

        Raises:
            AccessDeniedError: The principal may not read every session.
            StoreError: The store failed.
        """
        self._rules.require("read_all", "read the figures of every session")
        return await self._ledger.stats.model_usage(since=since, until=until)


__all__ = ["ScopedFigures"]
