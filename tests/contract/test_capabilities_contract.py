"""The store port: every backend is a core log with every capability, each implemented by itself.

A capability moved off the log is an object of its own, reached as an attribute (``store.search``,
``store.tree``): the backend carries none of its methods (no forwarding stubs); the others are
still methods of the backend.
"""

import inspect

import pytest

from thoughtledger.ledger.store.base import EventStore, LedgerStore
from thoughtledger.ledger.store.imports import Importing
from thoughtledger.ledger.store.log_tree import LogTree
from thoughtledger.ledger.store.loop_marks import LoopMarking
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.store.owners import Owners
from thoughtledger.ledger.store.postgres import PostgresEventStore
from thoughtledger.ledger.store.redaction import Redacting
from thoughtledger.ledger.store.rows import RowReads
from thoughtledger.ledger.store.search import Searching
from thoughtledger.ledger.store.sqlite import SqliteEventStore
from thoughtledger.ledger.store.stats_rows import Statistics

pytestmark = pytest.mark.anyio

CAPABILITIES: tuple[type, ...] = ()
ATTRIBUTES: dict[str, type] = {
    "search": Searching,
    "tree": LogTree,
    "stats": Statistics,
    "redaction": Redacting,
    "imports": Importing,
    "rows": RowReads,
    "loop_marks": LoopMarking,
    "owners": Owners,
}
"""The capabilities reached as attributes of a store, by attribute name."""

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
    for capability in (*CAPABILITIES, *ATTRIBUTES.values()):
        for name in _methods(capability):
            assert not hasattr(EventStore, name), f"EventStore.{name}"


@pytest.mark.parametrize("name", ATTRIBUTES)
async def test_a_capability_reached_as_an_attribute_is_an_object_of_its_own(
    store: LedgerStore, name: str
) -> None:
    capability = ATTRIBUTES[name]
    part = getattr(store, name)
    assert isinstance(part, capability)
    assert not isinstance(part, EventStore)  # an object of its own, not the log
    for method in _methods(capability):
        if method != name:  # ``store.search`` is the part itself, whose method is ``search``
            assert not hasattr(store, method), f"{type(store).__name__}.{method} forwards"
