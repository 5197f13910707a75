"""The way below the facade, for tests only: the store a ledger owns.

Nothing in the product reaches a ledger's store but :class:`thoughtledger.api.Ledger`
itself. Some tests must go below it: to set up what only another writer could (an event under a
chosen id), or to prove that a refused call wrote nothing at all, not even an event no session
shows. They do it through :func:`raw_store`, so that one search finds every test that does.
"""

from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.base import LedgerStore


def raw_store(ledger: Ledger) -> LedgerStore:
    """Return the store ``ledger`` owns (it stays owned: the ledger still closes it)."""
    return ledger._store  # the one test-only door below the facade


__all__ = ["raw_store"]
