"""Every third-party module the product imports is declared in pyproject.toml.

An import that nothing declares works wherever something else happens to install it (the dev
extras, an agent framework) and fails after a plain ``pip install``. So the product's sources are
read (not imported) and each third-party import must come from a core dependency, or, in a module
that serves an optional extra, from that extra, imported where it runs only when used (inside a
function), so that the module itself still imports without it.
"""

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("thoughtledger",)

EXTRA_MODULES = {
    "thoughtledger/ledger/store/postgres/store.py": "postgres",
    "thoughtledger/ledger/store/postgres/connect.py": "postgres",
    "thoughtledger/ledger/store/postgres/setup.py": "postgres",
    "thoughtledger/ledger/store/postgres/log_tree.py": "postgres",
    "thoughtledger/ledger/store/postgres/redact.py": "postgres",
    "thoughtledger/ledger/store/postgres/search_follow.py": "postgres",
    "thoughtledger/ledger/store/postgres/failover.py": "postgres",
    "thoughtledger/adapters/llm/client.py": "llm",
    "thoughtledger/adapters/llm/answer.py": "llm",
    "thoughtledger/adapters/llm/streaming.py": "llm",
    "thoughtledger/adapters/tool/frameworks/openai_agents.py": "openai-agents",
    "thoughtledger/adapters/tool/frameworks/pydantic_ai.py": "pydantic-ai",
    "thoughtledger/adapters/tool/frameworks/langchain.py": "langchain",
    "thoughtledger/adapters/cli/parquet_out.py": "parquet",
    "thoughtledger/adapters/otel/exporter.py": "otel",
    "thoughtledger/adapters/otel/receiver/decode.py": "otel",
}
"""The modules allowed to import an extra's distributions, and which extra."""


@dataclass(frozen=True)
class Import:
    """A third-party module imported by one of the product's files."""

    path: str
    line: int
    module: str
    when_imported: bool
    """Runs when the file is imported (not deferred into a function)."""

    @property
    def top(self) -> str:
        return self.module.split(".")[0]

    def where(self) -> str:
        return f"{self.path}:{self.line} imports {self.module}"


class _Collector(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.found: list[Import] = []
        self._depth = 0  # functions entered: their imports run only when called

    def _add(self, node: ast.AST, module: str) -> None:
        top = module.split(".")[0]
        if top in sys.stdlib_module_names or top in PACKAGES or top == "__future__":
            return
        line = getattr(node, "lineno", 0)
        self.found.append(Import(self.path, line, module, self._depth == 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module is not None:
            self._add(node, node.module)

    def visit_Call(self, node: ast.Call) -> None:
        # importlib.import_module("name") and __import__("name"): imports all the same.
        name = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if isinstance(node.func, ast.Name):
            name = node.func.id
        first = node.args[0] if node.args else None
        target = first.value if isinstance(first, ast.Constant) else None
        calls_import = name in ("import_module", "__import__")
        if calls_import and isinstance(target, str) and not target.startswith("."):  # "." is ours
            self._add(node, target)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for statement in node.orelse:  # only the body is for the type checker alone
                self.visit(statement)
            return
        self.generic_visit(node)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function
    visit_Lambda = _visit_function


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def product_imports() -> Iterator[Import]:
    for package in PACKAGES:
        for file in sorted((ROOT / package).rglob("*.py")):
            path = file.relative_to(ROOT).as_posix()
            collector = _Collector(path)
            collector.visit(ast.parse(file.read_text(encoding="utf-8"), filename=path))
            yield from collector.found


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
    assert match, f"cannot read a distribution name in {requirement!r}"
    return normalized(match.group(0))


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> tuple[set[str], dict[str, set[str]]]:
    """The core dependencies and each extra's, by normalized distribution name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {_name(requirement) for requirement in project["dependencies"]}
    extras = {
        normalized(extra): {_name(requirement) for requirement in requirements}
        for extra, requirements in project["optional-dependencies"].items()
    }
    return core, extras


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()


def providers(top: str) -> set[str]:
    """The installed distributions that provide the top-level module ``top``."""
    return {normalized(name) for name in _distributions().get(top, [])}


def test_every_third_party_import_is_a_declared_dependency() -> None:
    core, extras = declared()
    problems = []
    for found in product_imports():
        dists = providers(found.top)
        if not dists:
            problems.append(f"{found.where()}, which no installed distribution provides")
            continue
        if dists & core:
            continue
        extra = EXTRA_MODULES.get(found.path)
        if extra is None or not dists & extras.get(extra, set()):
            problems.append(
                f"{found.where()} (from {', '.join(sorted(dists))}), which is not among "
                "pyproject's dependencies: declare it, or import it only in a module of an extra"
            )
        elif found.when_imported:
            problems.append(
                f"{found.where()} at import time, so the module fails without the {extra!r} "
                "extra: import it inside the function that needs it"
            )
    assert not problems, "\n".join(problems)


def test_the_scan_sees_core_extra_and_deferred_imports() -> None:
    # Guards the test above against passing vacuously (a scan that finds nothing).
    found = {(i.path, i.top): i for i in product_imports()}
    assert found["thoughtledger/adapters/mcp/server.py", "mcp"].when_imported
    assert not found[
        "thoughtledger/adapters/tool/frameworks/langchain.py", "langchain_core"
    ].when_imported
    assert not found["thoughtledger/adapters/llm/client.py", "openai"].when_imported
    assert not found["thoughtledger/adapters/common/hardened.py", "uvicorn"].when_imported
    core, extras = declared()
    assert {"mcp", "pydantic"} <= core
    assert {"asyncpg"} <= extras["postgres"]
    assert {"langchain-core"} <= extras["langchain"]


def test_the_extra_modules_exist_and_their_extras_are_declared() -> None:
    _, extras = declared()
    for path, extra in EXTRA_MODULES.items():
        assert (ROOT / path).is_file(), path
        assert extras.get(extra), f"{path}: no extra {extra!r} in pyproject.toml"
