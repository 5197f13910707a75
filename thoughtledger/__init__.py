"""thoughtledger: an event-sourced reasoning ledger for AI agents.

Every thought, revision, branch and clear an agent records is an immutable, hash-chained event;
projections rebuild any view of it on demand. This package is the one import name a user needs::

    from thoughtledger import open_ledger

    async with open_ledger() as ledger:
        session = await ledger.new_session()
        await session.process_sequential_thinking(
            thought="Map the failure modes", thought_number=1, total_thoughts=3,
            next_thought_needed=True)

Inside it sit the design's three layers: :mod:`thoughtledger.ledger` (the event log),
:mod:`thoughtledger.projections` (pure folds from events to views) and :mod:`thoughtledger.api`
(the async facade, with one subpackage per way in or out). The names below are the facade's
public surface, the same objects :mod:`thoughtledger.api` exports.
"""

from typing import TYPE_CHECKING, Any

from thoughtledger.api import (
    DEFAULT_TTL,
    ConcurrencyError,
    GenerationError,
    HistoryPage,
    IntegrityError,
    InvalidInputError,
    InvalidThoughtError,
    Ledger,
    LedgerError,
    ProviderNotConfiguredError,
    Session,
    SessionNotFoundError,
    StoreError,
    StoreUnavailableError,
    ThinkOutcome,
    open_ledger,
    open_store,
)

if TYPE_CHECKING:
    from thoughtledger.api import (
        SequentialThinkingTool,
        sequential_thinking_tool,
        think_external,
    )

_LAZY = frozenset({"SequentialThinkingTool", "sequential_thinking_tool", "think_external"})


def __getattr__(name: str) -> Any:
    # The facade loads these on first use (the MCP server never needs them); so does this name.
    if name not in _LAZY:
        raise AttributeError(f"module 'thoughtledger' has no attribute {name!r}")
    import thoughtledger.api

    value = getattr(thoughtledger.api, name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_TTL",
    "ConcurrencyError",
    "GenerationError",
    "HistoryPage",
    "IntegrityError",
    "InvalidInputError",
    "InvalidThoughtError",
    "Ledger",
    "LedgerError",
    "ProviderNotConfiguredError",
    "SequentialThinkingTool",
    "Session",
    "SessionNotFoundError",
    "StoreError",
    "StoreUnavailableError",
    "ThinkOutcome",
    "open_ledger",
    "open_store",
    "sequential_thinking_tool",
    "think_external",
]
