"""Names a package exports but loads on first use (PEP 562's module ``__getattr__``).

A package whose every user would otherwise pay for a heavy module (the MCP SDK, file handling
only one command needs) lists those names with the module each comes from; the first access
imports it and keeps the value in the package, so later accesses are plain lookups.
"""

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """Return ``package``'s module ``__getattr__``, loading each of ``names`` from its module.

    Args:
        package: The package's name (its ``__name__``).
        names: Each name loaded on first use, and the module it comes from.
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


__all__ = ["lazy_names"]
