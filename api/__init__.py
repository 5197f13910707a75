"""The async facade of thoughtledger (and, in submodules, its MCP server and command line).

Example::

    from api import open_ledger

    async with open_ledger() as ledger:
        session = await ledger.new_session()
        await session.process_sequential_thinking(
            thought="Map the failure modes", thought_number=1, total_thoughts=3,
            next_thought_needed=True)
"""

from api.bootstrap import open_ledger, open_store
from api.external import think_external
from api.service import DEFAULT_TTL, Ledger, Session, ThinkOutcome
from api.tool import SequentialThinkingTool, sequential_thinking_tool
from ledger.errors import (
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

__all__ = [
    "DEFAULT_TTL",
    "ConcurrencyError",
    "GenerationError",
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
