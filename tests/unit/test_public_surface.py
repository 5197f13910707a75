"""The public surface is pinned: the ``__all__`` of each module a user imports.

``public_names.txt`` (beside this file) lists the ``__all__`` of the modules in
:data:`PUBLIC_MODULES`, one ``module name`` pair a line: the package, the facade, the in-process
tool and its framework adapters, the MCP server's factory, the issuer's token verifier and the
events (the README and ``docs/`` import from these and nothing else). A change to what one of them
exports fails here until that file says the same, so the surface only changes on purpose, in a
diff a reviewer sees. Every other module's ``__all__`` is internal: renaming inside the product
is not a public change, but each ``__all__`` must still name what its module holds.
"""

import importlib
import pkgutil
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import pytest

PUBLIC_MODULES = (
    "thoughtledger",
    "thoughtledger.api",
    "thoughtledger.adapters.tool",
    "thoughtledger.adapters.tool.frameworks",
    "thoughtledger.adapters.mcp",
    "thoughtledger.adapters.auth.issuer",
    "thoughtledger.ledger.events",
)
"""The modules the README and ``docs/`` tell users to import from."""
PINNED_FILE = Path(__file__).with_name("public_names.txt")


def public_modules() -> dict[str, ModuleType]:
    """The modules of :data:`PUBLIC_MODULES`, by name."""
    return {name: importlib.import_module(name) for name in PUBLIC_MODULES}


def modules_with_all() -> dict[str, ModuleType]:
    """Every module of the package that declares ``__all__``, but private and entry ones."""
    root = importlib.import_module("thoughtledger")
    found: dict[str, ModuleType] = {"thoughtledger": root}
    for info in pkgutil.walk_packages(root.__path__, "thoughtledger."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue  # private (``_extras``) or an entry point (``__main__``)
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            found[info.name] = module
    return found


def pinned() -> dict[str, set[str]]:
    names: dict[str, set[str]] = defaultdict(set)
    for line in PINNED_FILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            module, name = line.split()
            names[module].add(name)
    return dict(names)


PUBLIC = public_modules()
ALL = modules_with_all()
PINNED = pinned()


def test_the_pinned_modules_are_the_public_ones() -> None:
    assert sorted(PINNED) == sorted(PUBLIC), f"update {PINNED_FILE.name} if this is deliberate"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_each_public_all_is_exactly_its_pinned_names(name: str) -> None:
    declared = list(PUBLIC[name].__all__)
    assert len(declared) == len(set(declared)), f"{name}.__all__ repeats a name"
    exported = set(declared)
    expected = PINNED.get(name, set())
    assert (sorted(exported - expected), sorted(expected - exported)) == ([], []), (
        f"(added, removed) in {name}.__all__; update {PINNED_FILE.name} if this is deliberate"
    )


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_name_in_all_exists(name: str) -> None:
    module = ALL[name]
    assert [item for item in module.__all__ if not hasattr(module, item)] == []


def test_the_package_exports_the_facades_user_names_and_the_tool() -> None:
    # ``thoughtledger`` is the one a user imports from: the facade's user-facing names (a part
    # of its surface, ``thoughtledger.api``, which its adapters import), the in-process tool,
    # and the thought a model writes with the model the environment configures.
    assert {"Ledger", "open_ledger", "Proofs", "Transfer"} <= PINNED["thoughtledger"]
    own = {
        "SequentialThinkingTool",
        "sequential_thinking_tool",
        "think_external",
        "think_external_stream",
    }
    assert PINNED["thoughtledger"] - own <= PINNED["thoughtledger.api"]


def test_one_name_has_one_meaning_across_the_public_modules() -> None:
    # A name two public modules export is the same object in both (``thoughtledger.Ledger`` is
    # ``thoughtledger.api.Ledger``), never two functions that share a name and a docstring.
    owners: dict[str, object] = {}
    for name, module in PUBLIC.items():
        for public in module.__all__:
            value = getattr(module, public)
            seen = owners.setdefault(public, value)
            assert seen is value, f"{name}.{public} is not the object another module exports"
