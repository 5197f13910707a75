"""The facade's and its adapters' errors: the branches of the one tree the core does not raise.

They derive from the core's root (:mod:`thoughtledger.ledger.errors`), so a caller catching
``LedgerError`` catches them too::

    LedgerError
    ├── (the core's: ConcurrencyError, SessionNotFoundError, InvalidInputError, ...)
    ├── AccessDeniedError           the caller's role may not do this at all (also PermissionError)
    ├── ImportRefusedError          an export file cannot be imported, or an import stopped
    ├── GenerationError             a language model could not write the thought; nothing appended
    │   └── ProviderNotConfiguredError  no API key (or base URL) for the model's provider
    └── TelemetryExportError        spans could not be sent to the OTLP endpoint
"""

from thoughtledger.ledger.errors import LedgerError, SessionNotFoundError


class AccessDeniedError(LedgerError, PermissionError):
    """The caller's role may not do this to any session (a reader recording a thought, say).

    A session the caller may not see is answered as missing instead
    (:class:`~thoughtledger.ledger.errors.SessionNotFoundError`), so that nothing is revealed.
    """


class ImportRefusedError(LedgerError):
    """An export file cannot be imported, or an import stopped midway.

    Refused: the file is malformed, tampered with, cut short, over the API's limits, or conflicts
    with the ledger; nothing was written. Stopped: the database failed, or another writer changed
    the same sessions, after whole sessions were written (the message says how many events).
    """


class GenerationError(LedgerError):
    """A language model could not write the thought; nothing was appended.

    The message starts with the MCP API reference's "Failed to generate thought with LLM" and
    carries the provider's own message (for example its rate-limit or model-not-found text).

    Attributes:
        status: The last HTTP status the provider answered with, if it answered at all.
        attempts: How many requests were made.
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class ProviderNotConfiguredError(GenerationError):
    """The model's provider has no API key ("OpenAI API key not configured", ...).

    The messages are the MCP API reference's.
    """


class TelemetryExportError(LedgerError):
    """Spans could not be sent: the OTLP endpoint refused them or could not be reached."""


def not_found(session_id: str) -> SessionNotFoundError:
    """The error that says a ledger holds no session ``session_id``."""
    return SessionNotFoundError(f"no session {session_id!r} in this ledger")


__all__ = [
    "AccessDeniedError",
    "GenerationError",
    "ImportRefusedError",
    "ProviderNotConfiguredError",
    "TelemetryExportError",
    "not_found",
]
