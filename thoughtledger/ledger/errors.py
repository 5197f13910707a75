"""The one error tree of thoughtledger.

Every error the product raises on purpose derives from :class:`LedgerError`::

    LedgerError
    ├── ConcurrencyError          expected_version did not match the stream's version
    ├── SessionNotFoundError      (also LookupError) no such session
    ├── InvalidInputError         (also ValueError) bad ids, bad events, oversize payloads
    │   └── InvalidThoughtError   a rule of sequential thinking was broken
    ├── EventDecodingError        a stored event has an unknown type or schema version
    ├── IntegrityError            a hash chain does not verify
    ├── GenerationError           a language model could not write the thought; nothing appended
    │   └── ProviderNotConfiguredError  no API key (or base URL) for the model's provider
    └── StoreError                a storage failure, always raised ``from`` the driver error
        ├── StoreUnavailableError the database cannot be reached or stays locked
        ├── LedgerNotFoundError   opened for reading, and there is no ledger at that place
        ├── NotALedgerError       the file or database is not a thoughtledger database
        └── SchemaVersionError    the schema is newer than this code (or, read-only, older)

Driver errors are translated where they arise; callers catch ``LedgerError`` and show its message.
"""


class LedgerError(Exception):
    """Root of every error thoughtledger raises on purpose."""


class ConcurrencyError(LedgerError):
    """An append named an ``expected_version`` that is not the stream's current version.

    Attributes:
        session_id: The stream that was appended to.
        expected_version: The version the caller believed current.
        actual_version: The version found in the store.
    """

    def __init__(self, session_id: str, expected_version: int, actual_version: int) -> None:
        super().__init__(
            f"session {session_id!r} is at version {actual_version}, "
            f"not {expected_version}: another writer appended first; reload and retry"
        )
        self.session_id = session_id
        self.expected_version = expected_version
        self.actual_version = actual_version


class SessionNotFoundError(LedgerError, LookupError):
    """No session exists under the given id."""


class InvalidInputError(LedgerError, ValueError):
    """An argument is malformed: an id, an event, a version window, a payload size."""


class InvalidThoughtError(InvalidInputError):
    """A thought breaks a rule of sequential thinking (for example a thought number below 1)."""


class EventDecodingError(LedgerError):
    """A stored event cannot be decoded: unknown type, newer schema version or malformed payload."""


class IntegrityError(LedgerError):
    """A hash chain does not verify: a stored event was edited, removed or reordered."""


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


class StoreError(LedgerError):
    """The storage backend failed; the driver's error is the ``__cause__``."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached, or stayed locked past the retry budget."""


class LedgerNotFoundError(StoreError):
    """A ledger opened for reading does not exist: no such file, or no ledger tables there.

    Reading never creates a ledger, so a mistyped path is reported instead of "verified empty".
    """


class NotALedgerError(StoreError):
    """The database exists but is not a thoughtledger database (or not a database at all)."""


class SchemaVersionError(StoreError):
    """The database schema is newer than this version of thoughtledger understands.

    Also raised when a ledger opened read-only has an older schema this code cannot read without
    upgrading it (reading never upgrades a schema).
    """


class TelemetryExportError(LedgerError):
    """Spans could not be sent: the OTLP endpoint refused them or could not be reached."""


class MissingExtraError(LedgerError):
    """An optional extra the operation needs is not installed (the message names it)."""


__all__ = [
    "ConcurrencyError",
    "EventDecodingError",
    "GenerationError",
    "IntegrityError",
    "InvalidInputError",
    "InvalidThoughtError",
    "LedgerError",
    "LedgerNotFoundError",
    "MissingExtraError",
    "NotALedgerError",
    "ProviderNotConfiguredError",
    "SchemaVersionError",
    "SessionNotFoundError",
    "StoreError",
    "StoreUnavailableError",
    "TelemetryExportError",
]
