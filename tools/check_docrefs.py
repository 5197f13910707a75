"""Check that every cross-reference in thoughtledger's docstrings and comments leads somewhere.

Usage: .venv/bin/python tools/check_docrefs.py [FILE.py ...]
(default: every module of the package; tools/test runs it after mypy)

A reference is Sphinx's ``:role:`target``` for the roles ``mod``, ``class``, ``func``, ``meth``,
``data``, ``attr`` and ``exc``, with an optional leading ``~`` (show the last name only) or ``.``
(a name relative to where it is written), and optionally titled (``:meth:`title <target>```).
A target resolves when it is an importable module, or an attribute chain from one: a dotted name
is tried as written (``thoughtledger.api.Ledger``), then from the classes the reference sits in
(innermost first) and the classes they derive from, the module's own namespace (what it imports
under ``TYPE_CHECKING`` included), :mod:`thoughtledger.api` and the builtins; a target with a
leading dot, found nowhere there, is searched as Sphinx does: the one object of the package whose
name ends with it (``:meth:`.EventStore.read_stream```). A ``!`` before a target (no link) is not
checked. Each reference that does not resolve is printed as ``file:line: target``, and the exit
status is then 1.

A module that cannot be imported because a third-party package is missing (an optional extra such
as pyarrow or LangChain), or a target inside such a package, cannot be checked: it is counted and
skipped, never reported as stale. An import error naming a thoughtledger module is stale, and a
module of the package that fails to import for that reason is reported too.
"""

import ast
import builtins
import functools
import importlib
import importlib.util
import inspect
import re
import sys
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "thoughtledger"
FALLBACK = "thoughtledger.api"
"""Where a bare name is looked up after the module's own namespace."""

REFERENCE = re.compile(r":(mod|class|func|meth|data|attr|exc):`([^`]+)`")
TITLED = re.compile(r"^.*<([^<>]+)>$", re.DOTALL)
WRAPPED = re.compile(r"\s*\n\s*(?:#\s*)?")
"""A line break inside a target, with a comment's ``#`` on the next line."""


class Verdict(Enum):
    """What resolving a target found."""

    FOUND = "found"
    MISSING = "missing"
    UNCHECKABLE = "uncheckable"
    """It needs a third-party package that is not installed."""


@dataclass(frozen=True)
class Reference:
    """One ``:role:`target``` in a module's text."""

    line: int
    role: str
    target: str
    """As written, without its title: ``~thoughtledger.api.Ledger``, ``.Foo``, ``bar``."""


def references(source: str) -> list[Reference]:
    """Every reference in ``source``, in order, each with the line it starts on.

    A target wrapped over two lines (of a docstring, or of two comments) is read as one name.
    """
    found: list[Reference] = []
    for match in REFERENCE.finditer(source):
        target = match.group(2)
        titled = TITLED.match(target)
        if titled:
            target = titled.group(1)
        target = WRAPPED.sub("", target).strip()
        line = source.count("\n", 0, match.start()) + 1
        found.append(Reference(line, match.group(1), target))
    return found


def third_party_missing(error: ImportError) -> bool:
    """Whether ``error`` is a package outside thoughtledger missing, not a module of ours."""
    name = error.name or ""
    return bool(name) and name != PACKAGE and not name.startswith(PACKAGE + ".")


def import_module(name: str) -> types.ModuleType | Verdict:
    """The module ``name``; MISSING when no such module exists (or one of ours it imports does
    not), UNCHECKABLE when it needs a third-party package that is not installed."""
    try:
        if importlib.util.find_spec(name) is None:
            return Verdict.MISSING
        return importlib.import_module(name)
    except ImportError as error:
        missing = error.name or ""
        if name == missing or name.startswith(missing + "."):
            return Verdict.MISSING  # ``name`` itself, or a package it would be in, is not there
        return Verdict.UNCHECKABLE if third_party_missing(error) else Verdict.MISSING
    except ValueError:  # find_spec of a name like "a..b" or of a module without a spec
        return Verdict.MISSING


def has_attribute(owner: object, name: str) -> bool:
    """Whether ``name`` is an attribute of ``owner``, counting what a class declares for its
    instances (annotated fields of dataclasses, NamedTuples, pydantic models; ``__slots__``) and
    what its methods assign to ``self``."""
    if hasattr(owner, name):
        return True
    if not isinstance(owner, type):
        return False
    for klass in owner.__mro__:
        if name in inspect.get_annotations(klass):
            return True
        slots = klass.__dict__.get("__slots__", ())
        if name in ((slots,) if isinstance(slots, str) else slots):
            return True
        if name in assigned_to_self(klass):
            return True
    return False


_ASSIGNED: dict[type, frozenset[str]] = {}
_TREES: dict[str, ast.Module] = {}
"""The syntax tree of each module read so far, by module name."""


def module_tree(name: str) -> ast.Module | None:
    """The syntax tree of the module ``name``, if its text can be read."""
    if name not in _TREES:
        path = getattr(sys.modules.get(name), "__file__", None)
        if not (path and path.endswith(".py")):
            return None
        _TREES[name] = ast.parse(Path(path).read_text(encoding="utf-8"))
    return _TREES[name]


def assigned_to_self(klass: type) -> frozenset[str]:
    """The names ``klass``'s own methods assign as ``self.name`` (instance attributes)."""
    if klass not in _ASSIGNED:
        names: set[str] = set()
        tree = module_tree(klass.__module__)
        if tree is not None:
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name == klass.__name__:
                    for inner in ast.walk(node):
                        if (
                            isinstance(inner, ast.Attribute)
                            and isinstance(inner.ctx, ast.Store)
                            and isinstance(inner.value, ast.Name)
                            and inner.value.id == "self"
                        ):
                            names.add(inner.attr)
        _ASSIGNED[klass] = frozenset(names)
    return _ASSIGNED[klass]


def follow(owner: object, names: list[str]) -> Verdict:
    """Whether the chain of attributes ``names`` leads somewhere from ``owner``."""
    for position, name in enumerate(names):
        if not has_attribute(owner, name):
            return Verdict.MISSING
        if not hasattr(owner, name):
            # A declared instance field: nothing further along it can be looked up.
            return Verdict.FOUND if position == len(names) - 1 else Verdict.UNCHECKABLE
        owner = getattr(owner, name)
    return Verdict.FOUND


def resolve_absolute(target: str) -> Verdict:
    """Whether the dotted ``target`` is a module or an attribute chain from the longest
    importable module it starts with."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        module = import_module(".".join(parts[:cut]))
        if module is Verdict.UNCHECKABLE:
            return Verdict.UNCHECKABLE
        if isinstance(module, types.ModuleType):
            return follow(module, parts[cut:])
    return Verdict.MISSING


def static_imports(tree: ast.Module, module_name: str, is_package: bool) -> dict[str, str]:
    """What each name the module imports anywhere (``if TYPE_CHECKING:`` blocks and function
    bodies included) stands for, as a dotted path."""
    package = module_name if is_package else module_name.rpartition(".")[0]
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imported[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    imported[head] = head
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{source}.{alias.name}"
    return imported


def enclosing_classes(tree: ast.Module, line: int) -> list[list[str]]:
    """The qualified names (as name lists) of the classes whose body holds ``line``, innermost
    first."""
    found: list[list[str]] = []

    def visit(node: ast.AST, path: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            inside = (
                child.lineno <= line <= (child.end_lineno or child.lineno)
                if isinstance(child, ast.stmt)
                else False
            )
            if isinstance(child, ast.ClassDef) and inside:
                found.insert(0, [*path, child.name])
                visit(child, [*path, child.name])
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and inside:
                visit(child, [*path, child.name, "<locals>"])

    visit(tree, [])
    return [names for names in found if "<locals>" not in names]


@dataclass(frozen=True)
class Place:
    """Where references are resolved from: a module, its syntax tree and what it imports."""

    module: types.ModuleType
    tree: ast.Module
    imports: Mapping[str, str]


def resolve_in(
    namespace: Mapping[str, object], imports: Mapping[str, str], names: list[str]
) -> Verdict:
    """Whether ``names`` resolves from a namespace, or through a name the module imports."""
    if names[0] in namespace:
        return follow(namespace[names[0]], names[1:])
    if names[0] in imports:
        return resolve_absolute(".".join([imports[names[0]], *names[1:]]))
    return Verdict.MISSING


def resolve(reference: Reference, place: Place) -> Verdict:
    """Whether ``reference``, written in ``place``, leads to a module or an attribute."""
    if reference.target.startswith("!"):
        return Verdict.FOUND  # Sphinx makes no link of it: there is nothing to check
    target = reference.target.lstrip("~")
    relative = target.startswith(".")
    target = target.lstrip(".").removesuffix("()")
    if not target or any(not part.isidentifier() for part in target.split(".")):
        return Verdict.MISSING
    names = target.split(".")
    verdicts: list[Verdict] = []
    if not relative and "." in target:
        verdicts.append(resolve_absolute(target))
    for qualified in enclosing_classes(place.tree, reference.line):
        verdicts.append(follow(place.module, [*qualified, *names]))
        # "See :meth:`EventStore.read_stream`" on an override names the class it overrides.
        owner: object = place.module
        for name in qualified:
            owner = getattr(owner, name, None)
        if isinstance(owner, type):
            bases = {base.__name__: base for base in reversed(owner.__mro__)}
            verdicts.append(resolve_in(bases, {}, names))
    verdicts.append(resolve_in(vars(place.module), place.imports, names))
    fallback = import_module(FALLBACK)
    if isinstance(fallback, types.ModuleType):
        verdicts.append(follow(fallback, names))
    verdicts.append(resolve_in(vars(builtins), {}, names))
    if reference.role == "mod" and not relative:
        verdicts.append(resolve_absolute(target))
    if relative and Verdict.FOUND not in verdicts:
        verdicts.append(resolve_suffix(names))
    if Verdict.FOUND in verdicts:
        return Verdict.FOUND
    return Verdict.UNCHECKABLE if Verdict.UNCHECKABLE in verdicts else Verdict.MISSING


@functools.cache
def package_modules() -> tuple[types.ModuleType, ...]:
    """Every module of the package that can be imported here."""
    imported = (import_module(module_name(path)) for path in sorted((ROOT / PACKAGE).rglob("*.py")))
    return tuple(module for module in imported if isinstance(module, types.ModuleType))


def resolve_suffix(names: list[str]) -> Verdict:
    """Whether exactly one object of the package ends in ``names`` (``.EventStore.read_stream``).

    Sphinx's search for a target written with a leading dot: when it is not found where it is
    written, any object whose dotted name ends with it, provided one object does (a name
    imported into several modules is one object).
    """
    found: set[int] = set()
    for module in package_modules():
        if names[0] in vars(module) and follow(module, names) is Verdict.FOUND:
            found.add(id(vars(module)[names[0]]))
    return Verdict.FOUND if len(found) == 1 else Verdict.MISSING


def unresolved(source: str, module: types.ModuleType) -> list[Reference]:
    """The references in ``source`` (the text of ``module``) that lead nowhere.

    Raises:
        SyntaxError: ``source`` is not Python.
    """
    tree = ast.parse(source)
    _TREES[module.__name__] = tree
    is_package = hasattr(module, "__path__")
    place = Place(module, tree, static_imports(tree, module.__name__, is_package))
    return [ref for ref in references(source) if resolve(ref, place) is Verdict.MISSING]


def load_text(name: str, source: str) -> types.ModuleType:
    """A module named ``name`` made by running ``source``, as importing a file would.

    Raises:
        SyntaxError: ``source`` is not Python.
    """
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), vars(module))  # noqa: S102  # the text is a module to check, like an import
    return module


def module_name(path: Path) -> str:
    """The dotted name of the module at ``path`` (a file under the repository)."""
    parts = list(path.resolve().relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(paths: list[Path]) -> Iterator[Path]:
    """The files given, or every module of the package."""
    if paths:
        yield from paths
    else:
        yield from sorted((ROOT / PACKAGE).rglob("*.py"))


def main(argv: list[str]) -> int:
    """Check the modules named in ``argv`` (default: all) and print what leads nowhere.

    Returns:
        The exit status: 0 when every reference resolves, else 1.
    """
    stale: list[str] = []
    skipped: list[str] = []
    checked = 0
    for path in modules([Path(arg) for arg in argv]):
        shown = path.resolve().relative_to(ROOT)
        module = import_module(module_name(path))
        if module is Verdict.UNCHECKABLE:
            skipped.append(f"{shown} (it needs a package that is not installed)")
            continue
        if not isinstance(module, types.ModuleType):
            stale.append(f"{shown}:1: {module_name(path)} (cannot be imported)")
            continue
        checked += 1
        for ref in unresolved(path.read_text(encoding="utf-8"), module):
            stale.append(f"{shown}:{ref.line}: {ref.target}")
    for line in stale:
        print(line)
    for line in skipped:
        print(f"note: not checked: {line}", file=sys.stderr)
    print(f"{checked} modules checked, {len(stale)} references lead nowhere", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.path[0] = str(ROOT)  # the package of this checkout, not the tools beside this script
    sys.exit(main(sys.argv[1:]))
