"""Private names of the MCP and OpenTelemetry SDKs: where the product may use them, and on which
SDK versions that use was checked.

A private name (``mcp.shared._x``, ``server._y``) may change in any release. The product keeps
the MCP SDK's in :mod:`thoughtledger.adapters.mcp.sdk_private` alone, which states the versions it
was
checked against; OpenTelemetry's it does not use at all.
"""

import ast
import importlib.metadata
import tomllib
from collections.abc import Iterator
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from thoughtledger.adapters.mcp import sdk_private

ROOT = Path(__file__).resolve().parents[2]
PRIVATE_HOME = "thoughtledger/adapters/mcp/sdk_private.py"
SDKS = {"mcp": ("mcp", "mcp_types"), "opentelemetry": ("opentelemetry",)}
"""Each SDK by name, with the top-level packages it installs."""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _sdk_of(module: str) -> str | None:
    top = module.split(".")[0]
    return next((sdk for sdk, tops in SDKS.items() if top in tops), None)


def private_uses(source: str) -> Iterator[tuple[str, int, str]]:
    """Each private SDK name ``source`` uses: the SDK, the line, the name.

    Imports of a private module or name, attributes of an SDK module read as ``mcp._x``, and
    private attributes read off anything in a module that imports an SDK (other than ``self``
    and ``cls``, which are the module's own), through ``getattr`` with a literal name too.
    """
    tree = ast.parse(source)
    imported: dict[str, str] = {}  # local name -> SDK
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            sdk = _sdk_of(node.module)
            if sdk is None:
                continue
            names = [alias.name for alias in node.names]
            if any(_private(part) for part in node.module.split(".")) or any(map(_private, names)):
                yield sdk, node.lineno, f"from {node.module} import {', '.join(names)}"
            for alias in node.names:
                imported[alias.asname or alias.name] = sdk
        elif isinstance(node, ast.Import):
            for alias in node.names:
                sdk = _sdk_of(alias.name)
                if sdk is None:
                    continue
                if any(_private(part) for part in alias.name.split(".")):
                    yield sdk, node.lineno, f"import {alias.name}"
                imported[alias.asname or alias.name.split(".")[0]] = sdk
    if not imported:
        return
    uses_sdks = sorted(set(imported.values()))
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr):
            continue
        name: str | None = None
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            name = ast.unparse(node)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            name = ast.unparse(node)
        if name is not None:
            for sdk in uses_sdks:
                yield sdk, node.lineno, name


def _product_files() -> Iterator[Path]:
    yield from sorted((ROOT / "thoughtledger").rglob("*.py"))


def test_the_mcp_sdks_private_names_are_used_in_one_module_and_opentelemetrys_nowhere() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name} ({sdk})"
        for path in _product_files()
        for sdk, line, name in private_uses(path.read_text("utf-8"))
        if not (sdk == "mcp" and path.relative_to(ROOT).as_posix() == PRIVATE_HOME)
    ]
    assert found == [], (
        "private SDK names outside thoughtledger/adapters/mcp/sdk_private.py (move the MCP SDK's "
        "there, with why; use only OpenTelemetry's public API):\n" + "\n".join(found)
    )


def test_the_scan_sees_the_private_module_s_own_uses() -> None:
    uses = list(private_uses((ROOT / PRIVATE_HOME).read_text("utf-8")))
    assert uses, "the scan finds nothing where a private name is known to be used"
    probes = "from mcp.shared._stream_protocols import ReadStream\nimport mcp\nmcp.x._y\n"
    assert [name for _, _, name in private_uses(probes)] == [
        "from mcp.shared._stream_protocols import ReadStream",
        "mcp.x._y",
    ]


def _declared_range(distribution: str) -> SpecifierSet:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    for line in project["dependencies"]:
        requirement = Requirement(line)
        if requirement.name == distribution:
            return requirement.specifier
    raise AssertionError(f"{distribution} is not a declared dependency")


def test_the_installed_mcp_sdk_is_one_the_private_names_were_checked_against() -> None:
    installed = Version(importlib.metadata.version("mcp"))
    checked = SpecifierSet(sdk_private.CHECKED_RANGE)
    declared = _declared_range("mcp")
    assert installed in declared, f"mcp {installed} is outside pyproject's mcp{declared}"
    assert installed in checked, (
        f"mcp {installed} is outside mcp{checked}, the versions whose private names "
        "thoughtledger/adapters/mcp/sdk_private.py was checked against: re-check each private "
        "use it lists against this SDK (and the stdio tests), then update CHECKED_RANGE"
    )
    assert _floor(checked) in declared, f"mcp{checked} starts outside pyproject's mcp{declared}"


def _floor(checked: SpecifierSet) -> Version:
    """The lowest version ``checked`` admits (its ``>=`` bound)."""
    (floor,) = [spec.version for spec in checked if spec.operator == ">="]
    return Version(floor)
