"""The one error tree of thoughtledger.

Every error the product raises on purpose derives from :class:`LedgerError`::

    LedgerError
    ├── ConcurrencyError          expected_version did not match the stream's version
    ├── SessionNotFoundError      (also LookupError) no such session
    ├── InvalidInputError         (also ValueError) bad ids, bad events, oversize payloads
    │   └── InvalidThoughtError   a rule of sequential thinking was broken
    │       └── InvalidBatchError one thought of a batch broke one (it names which)
    ├── EventDecodingError        a stored event has an unknown type or schema version
    ├── IntegrityError            a hash chain does not verify
    └── StoreError                a storage failure, always raised ``from`` the driver error
        ├── StoreUnavailableError the database cannot be reached or stays locked
        ├── LedgerNotFoundError   opened for reading, and there is no ledger at that place
        ├── NotALedgerError       the file or database is not a thoughtledger database
        └── SchemaVersionError    the schema is newer than this code (or, read-only, older)

The facade adds its own branches (an import refused, a model's failure, spans not sent: see
``thoughtledger.api.errors``). Driver errors are translated where they arise; callers catch
``LedgerError`` and show its message.
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


class InvalidBatchError(InvalidThoughtError):
    """One thought of a batch is refused, so the whole batch is: nothing of it was recorded.

    Attributes:
        index: The refused thought's place in the batch, from 0.
        reason: Why it was refused, in the words a single call would have used.
    """

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"thoughts[{index}]: {reason}; nothing of the batch was recorded")
        self.index = index
        self.reason = reason


class EventDecodingError(LedgerError):
    """A stored event cannot be decoded: unknown type, newer schema version or malformed payload."""


class IntegrityError(LedgerError):
    """A hash chain does not verify: a stored event was edited, removed or reordered."""


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


class MissingExtraError(LedgerError):
    """An optional extra the operation needs is not installed (the message names it)."""


__all__ = [
    "ConcurrencyError",
    "EventDecodingError",
    "IntegrityError",
    "InvalidBatchError",
    "InvalidInputError",
    "InvalidThoughtError",
    "LedgerError",
    "LedgerNotFoundError",
    "MissingExtraError",
    "NotALedgerError",
    "SchemaVersionError",
    "SessionNotFoundError",
    "StoreError",
    "StoreUnavailableError",
]
