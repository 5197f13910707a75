"""No SQL is assembled by string formatting anywhere in the product."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SQL_CALLS = {"execute", "executemany", "fetch", "fetchrow", "fetchval", "exec_driver_sql", "text"}


def _product_files() -> list[Path]:
    return sorted(
        p for package in ("ledger", "projections", "api") for p in (ROOT / package).rglob("*.py")
    )


def _is_formatted(node: ast.expr) -> bool:
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    )


@pytest.mark.parametrize("path", _product_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_sql_is_never_built_by_string_formatting(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    offenders = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS)
            or (isinstance(node.func, ast.Name) and node.func.id in SQL_CALLS)
        )
        and node.args
        and _is_formatted(node.args[0])
    ]
    assert offenders == [], f"SQL built by formatting at lines {offenders}"
