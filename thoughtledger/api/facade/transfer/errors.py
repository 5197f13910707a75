"""The error of moving sessions between ledgers through an export file."""

from thoughtledger.ledger.errors import LedgerError


class ImportRefusedError(LedgerError):
    """An export file cannot be imported, or an import stopped midway.

    Refused: the file is malformed, tampered with, cut short, over the API's limits, or conflicts
    with the ledger; nothing was written. Stopped: the database failed, or another writer changed
    the same sessions, after whole sessions were written (the message says how many events).
    """


__all__ = ["ImportRefusedError"]
