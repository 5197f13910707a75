"""The async facade of thoughtledger (and, in submodules, its MCP server and command line).

Example::

    from thoughtledger import open_ledger

    async with open_ledger() as ledger:
        session = await ledger.new_session()
        await session.process_sequential_thinking(
            thought="Map the failure modes", thought_number=1, total_thoughts=3,
            next_thought_needed=True)
"""

from typing import TYPE_CHECKING, Any

from thoughtledger.api.facade.bootstrap import open_ledger, open_store
from thoughtledger.api.facade.history import HistoryPage
from thoughtledger.api.facade.outcome import ThinkOutcome
from thoughtledger.api.facade.service import DEFAULT_TTL, Ledger
from thoughtledger.api.facade.session import Session
from thoughtledger.ledger.errors import (
    ConcurrencyError,
    GenerationError,
    IntegrityError,
    InvalidInputError,
    InvalidThoughtError,
    LedgerError,
    ProviderNotConfiguredError,
    SessionNotFoundError,
    StoreError,
    StoreUnavailableError,
)

if TYPE_CHECKING:
    from thoughtledger.api.llm.external import think_external
    from thoughtledger.api.tool import SequentialThinkingTool, sequential_thinking_tool

# Loaded on first use: the MCP server imports this package on every spawn, and these pull in
# the LLM client and the tool schemas, which most conversations never touch.
_LAZY = {
    "think_external": "thoughtledger.api.llm.external",
    "SequentialThinkingTool": "thoughtledger.api.tool",
    "sequential_thinking_tool": "thoughtledger.api.tool",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'thoughtledger.api' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
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
