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
user-facing names, the same objects :mod:`thoughtledger.api` (the facade's whole surface) and the
in-process tool export.
"""

from typing import TYPE_CHECKING

from thoughtledger.ledger._lazy import lazy_names

if TYPE_CHECKING:
    from thoughtledger.adapters.llm.external import think_external, think_external_stream
    from thoughtledger.adapters.tool import SequentialThinkingTool, sequential_thinking_tool
    from thoughtledger.api import (
        DEFAULT_TTL,
        CheckpointReport,
        ConcurrencyError,
        GenerationError,
        HistoryPage,
        ImportRefusedError,
        IntegrityError,
        InvalidBatchError,
        InvalidInputError,
        InvalidThoughtError,
        Ledger,
        LedgerError,
        LedgerStats,
        Proofs,
        ProviderNotConfiguredError,
        Redaction,
        RedactionReport,
        Session,
        SessionNotFoundError,
        Statistics,
        StoreError,
        StoreUnavailableError,
        ThinkOutcome,
        Transfer,
        open_ledger,
        open_store,
    )

# Loaded on first use, all of them: ``import thoughtledger`` comes first in every start of the
# command (its script imports ``thoughtledger.__main__``), and only once the command's own
# ``main`` runs is Ctrl-C reported as one line rather than a traceback from deep in an import.
# The LLM client and the tool schemas load later still: most conversations never touch them.
_LAZY = {
    **dict.fromkeys(
        (
            "DEFAULT_TTL",
            "CheckpointReport",
            "ConcurrencyError",
            "GenerationError",
            "HistoryPage",
            "ImportRefusedError",
            "IntegrityError",
            "InvalidBatchError",
            "InvalidInputError",
            "InvalidThoughtError",
            "Ledger",
            "LedgerError",
            "LedgerStats",
            "Proofs",
            "ProviderNotConfiguredError",
            "Redaction",
            "RedactionReport",
            "Session",
            "SessionNotFoundError",
            "Statistics",
            "StoreError",
            "StoreUnavailableError",
            "ThinkOutcome",
            "Transfer",
            "open_ledger",
            "open_store",
        ),
        "thoughtledger.api",
    ),
    "think_external": "thoughtledger.adapters.llm.external",
    "think_external_stream": "thoughtledger.adapters.llm.external",
    "SequentialThinkingTool": "thoughtledger.adapters.tool",
    "sequential_thinking_tool": "thoughtledger.adapters.tool",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "DEFAULT_TTL",
    "CheckpointReport",
    "ConcurrencyError",
    "GenerationError",
    "HistoryPage",
    "ImportRefusedError",
    "IntegrityError",
    "InvalidBatchError",
    "InvalidInputError",
    "InvalidThoughtError",
    "Ledger",
    "LedgerError",
    "LedgerStats",
    "Proofs",
    "ProviderNotConfiguredError",
    "Redaction",
    "RedactionReport",
    "SequentialThinkingTool",
    "Session",
    "SessionNotFoundError",
    "Statistics",
    "StoreError",
    "StoreUnavailableError",
    "ThinkOutcome",
    "Transfer",
    "open_ledger",
    "open_store",
    "sequential_thinking_tool",
    "think_external",
    "think_external_stream",
]
