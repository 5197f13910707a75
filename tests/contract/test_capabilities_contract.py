"""The store port: every backend is a core log with every capability, each implemented by itself."""

import inspect

import pytest

from thoughtledger.ledger.store.base import EventStore, LedgerStore
from thoughtledger.ledger.store.imports import Importing
from thoughtledger.ledger.store.log_tree import LogTree
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.store.postgres import PostgresEventStore
from thoughtledger.ledger.store.redaction import Redacting
from thoughtledger.ledger.store.rows import RowReads
from thoughtledger.ledger.store.search import Searching
from thoughtledger.ledger.store.sqlite import SqliteEventStore
from thoughtledger.ledger.store.stats_rows import Statistics

pytestmark = pytest.mark.anyio

CAPABILITIES: tuple[type, ...] = (LogTree, Redacting, Importing, Statistics, RowReads)

# Checked by mypy: each backend class is a LedgerStore, so the facade can run on any of them.
BACKEND_CLASSES: tuple[type[LedgerStore], ...] = (
    MemoryEventStore,
    SqliteEventStore,
    PostgresEventStore,
)


def _methods(protocol: type) -> list[str]:
    return [
        name
        for name, value in vars(protocol).items()
        if inspect.isfunction(value) and not name.startswith("_")
    ]


@pytest.mark.parametrize("capability", CAPABILITIES, ids=lambda c: c.__name__)
async def test_every_backend_implements_every_capability(
    store: LedgerStore, capability: type
) -> None:
    assert isinstance(store, EventStore)
    assert isinstance(store, capability)
    for name in _methods(capability):
        # The backend's own method, not the protocol's declaration.
        assert getattr(type(store), name) is not getattr(capability, name), name


def test_no_backend_leaves_a_method_of_the_port_unimplemented() -> None:
    for backend in BACKEND_CLASSES:
        assert not inspect.isabstract(backend), backend.__name__


def test_the_core_log_holds_no_capability() -> None:
    for capability in CAPABILITIES:
        for name in _methods(capability):
            assert not hasattr(EventStore, name), f"EventStore.{name}"


async def test_search_is_an_object_of_its_own_on_every_backend(store: LedgerStore) -> None:
    assert isinstance(store.search, Searching)
    assert not isinstance(store.search, EventStore)  # an object of its own, not the log
