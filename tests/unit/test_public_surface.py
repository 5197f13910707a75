"""The public surface is pinned: every ``__all__`` in the ``thoughtledger`` package.

``public_names.txt`` (beside this file) lists each public module's ``__all__``, one
``module name`` pair a line. A change to what a module exports fails here until that file says
the same, so the surface only changes on purpose, and in a diff a reviewer sees.
"""

import importlib
import pkgutil
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import pytest

PACKAGES = ("thoughtledger",)
PINNED_FILE = Path(__file__).with_name("public_names.txt")


def public_modules() -> dict[str, ModuleType]:
    """Every module of :data:`PACKAGES` that declares ``__all__``, but private and entry ones."""
    found: dict[str, ModuleType] = {}
    for package in PACKAGES:
        root = importlib.import_module(package)
        names = [package] + [
            info.name for info in pkgutil.walk_packages(root.__path__, f"{package}.")
        ]
        for name in names:
            if any(part.startswith("_") for part in name.split(".")):
                continue  # private (``_extras``) or an entry point (``__main__``)
            module = importlib.import_module(name)
            if hasattr(module, "__all__"):
                found[name] = module
    return found


def pinned() -> dict[str, set[str]]:
    names: dict[str, set[str]] = defaultdict(set)
    for line in PINNED_FILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            module, name = line.split()
            names[module].add(name)
    return dict(names)


MODULES = public_modules()
PINNED = pinned()


def test_every_module_that_declares_all_is_pinned_and_no_other() -> None:
    assert sorted(MODULES) == sorted(PINNED), f"update {PINNED_FILE.name} if this is deliberate"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_each_all_is_exactly_its_pinned_names(name: str) -> None:
    declared = list(MODULES[name].__all__)
    assert len(declared) == len(set(declared)), f"{name}.__all__ repeats a name"
    exported = set(declared)
    expected = PINNED.get(name, set())
    assert (sorted(exported - expected), sorted(expected - exported)) == ([], []), (
        f"(added, removed) in {name}.__all__; update {PINNED_FILE.name} if this is deliberate"
    )


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_name_in_all_exists(name: str) -> None:
    module = MODULES[name]
    assert [item for item in module.__all__ if not hasattr(module, item)] == []


def test_the_packages_export_their_front_doors() -> None:
    # ``thoughtledger`` is the one a user imports from: the facade's user-facing names (a part
    # of its surface, ``thoughtledger.api``, which its adapters import) and the in-process tool;
    # ``ledger`` and ``projections`` are namespaces whose modules each declare their own surface.
    assert {"Ledger", "open_ledger", "Proofs", "Transfer"} <= PINNED["thoughtledger"]
    tool = {"SequentialThinkingTool", "sequential_thinking_tool", "think_external"}
    assert PINNED["thoughtledger"] - tool <= PINNED["thoughtledger.api"]
