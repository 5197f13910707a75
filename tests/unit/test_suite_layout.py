"""The test suite's own layout: shared helpers live in ``tests/support``, fixtures in conftest.py
files, and no module of the suite imports from a test module (``test_*``)."""

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def imported_modules(source: str, location: Path) -> list[str]:
    """Every module ``source`` imports, were it the file at ``location`` inside the suite (relative
    imports are resolved against that file's package)."""
    package = location.relative_to(TESTS.parent).with_suffix("").parts[:-1]
    found: list[str] = []
    for node in ast.walk(ast.parse(source, str(location))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            # ``from tests.integration import test_x`` names a module, not an attribute.
            found += [module, *(f"{module}.{alias.name}" for alias in node.names)]
    return found


def is_test_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "tests" and any(part.startswith("test_") for part in parts)


def test_no_module_of_the_suite_imports_from_a_test_module() -> None:
    offenders = [
        f"{path.relative_to(TESTS.parent)} imports {module}"
        for path in sorted(TESTS.rglob("*.py"))
        for module in sorted(set(imported_modules(path.read_text(), path)))
        if is_test_module(module)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "line",
    [
        "from tests.integration.test_x import helper",
        "import tests.integration.test_x",
        "from tests.integration import test_x",
        "from .test_x import helper",
        "from . import test_x",
    ],
)
def test_each_way_of_importing_a_test_module_is_seen(line: str) -> None:
    location = TESTS / "integration" / "conftest.py"
    assert "tests.integration.test_x" in imported_modules(line, location)


def test_imports_of_helpers_and_libraries_are_not_taken_for_test_modules() -> None:
    location = TESTS / "integration" / "test_x.py"
    source = "import pytest\nfrom tests.support.cli import cli\nfrom hypothesis import strategies"
    assert not any(is_test_module(m) for m in imported_modules(source, location))


def test_shared_helpers_are_a_package_without_test_modules() -> None:
    support = TESTS / "support"
    assert (support / "__init__.py").is_file()
    assert sorted(p.name for p in support.glob("test_*.py")) == []
